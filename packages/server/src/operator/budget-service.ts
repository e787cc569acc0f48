import type { Account } from '@tollgate/protocol';
import { sql, type Kysely } from 'kysely';
import { z } from 'zod';
import { accountView } from '../accounts/account-service.js';
import type { KeyService } from '../auth/key-service.js';
import type { KeyView } from '../auth/key-view.js';
import { MAX_BALANCE_MICRO_YUAN } from '../billing/money.js';
import { notFound } from '../errors/api-error.js';
import { parseInput, requiredAs, type Unparsed } from '../errors/input-schema.js';
import type { Database } from '../store/schema.js';
import type { Clock } from '../util/effects.js';
import { BUDGET_WINDOWS, currentWindowStart, windowStarts } from '../budgets/budget-windows.js';

const NOT_A_LIMIT = `must be an integer of micro-yuan from 0 to ${MAX_BALANCE_MICRO_YUAN}`;
const NOT_A_WINDOW = `must be one of ${BUDGET_WINDOWS.join(', ')}`;

/** The one rule for a budget's fields (admin API, console and CLI alike), a key's or an account's. */
const budgetInput = z.object({
  limit: requiredAs(
    NOT_A_LIMIT,
    z
      .int({ error: NOT_A_LIMIT })
      .min(0, { error: NOT_A_LIMIT })
      .max(MAX_BALANCE_MICRO_YUAN, { error: NOT_A_LIMIT }),
  ),
  window: requiredAs(NOT_A_WINDOW, z.enum(BUDGET_WINDOWS, { error: NOT_A_WINDOW })),
});
export type BudgetInput = Unparsed<typeof budgetInput>;

/**
 * Setting and removing budgets (`PUT`/`DELETE /admin/v1/{keys,accounts}/{id}/budget`, `tollgate
 * keys budget`, `tollgate accounts budget`). One update each. A new budget, or a change of
 * window, counts spend from now on (the current window, from 0); a change of limit alone keeps
 * what the window has spent. Removing a budget forgets its spend; a key's open holds stay counted
 * in `budget_held`, since they give it back when they resolve.
 */
export class BudgetService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly keys: KeyService,
    private readonly at: { readonly clock: Clock; readonly budgetTimeZone: string },
  ) {}

  async setForKey(keyId: string, input: BudgetInput): Promise<KeyView> {
    const budget = parseInput(budgetInput, input);
    const updated = await this.db
      .updateTable('api_keys')
      .set(this.assignment(budget))
      .where('id', '=', keyId)
      .executeTakeFirst();
    if (updated.numUpdatedRows !== 1n) throw notFound('api key');
    return this.keyAfterChange(keyId);
  }

  async removeForKey(keyId: string): Promise<KeyView> {
    const updated = await this.db
      .updateTable('api_keys')
      .set(REMOVED)
      .where('id', '=', keyId)
      .executeTakeFirst();
    if (updated.numUpdatedRows !== 1n) throw notFound('api key');
    return this.keyAfterChange(keyId);
  }

  async setForAccount(accountId: string, input: BudgetInput): Promise<Account> {
    const budget = parseInput(budgetInput, input);
    const updated = await this.db
      .updateTable('accounts')
      .set(this.assignment(budget))
      .where('id', '=', accountId)
      .executeTakeFirst();
    if (updated.numUpdatedRows !== 1n) throw notFound('account');
    return this.account(accountId);
  }

  async removeForAccount(accountId: string): Promise<Account> {
    const updated = await this.db
      .updateTable('accounts')
      .set(REMOVED)
      .where('id', '=', accountId)
      .executeTakeFirst();
    if (updated.numUpdatedRows !== 1n) throw notFound('account');
    return this.account(accountId);
  }

  /** The columns of a budget being set; a row keeps its spend only for the same window. */
  private assignment(budget: z.output<typeof budgetInput>) {
    const start = currentWindowStart(
      budget.window,
      windowStarts(this.at.clock.now(), this.at.budgetTimeZone),
    );
    const sameWindow = sql<boolean>`(budget_limit is not null and budget_window = ${budget.window})`;
    return {
      budget_limit: budget.limit,
      budget_window: budget.window,
      budget_spent: sql<number>`case when ${sameWindow} then budget_spent else 0 end`,
      budget_window_start: sql<number>`case when ${sameWindow} then budget_window_start else cast(${start} as bigint) end`,
    };
  }

  /** The key's view after a change, and its cached entry dropped so this instance sees it. */
  private async keyAfterChange(keyId: string): Promise<KeyView> {
    const row = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', keyId)
      .executeTakeFirstOrThrow();
    this.keys.forget(row.key_hash);
    return this.keys.view(row);
  }

  private async account(accountId: string): Promise<Account> {
    const row = await this.db
      .selectFrom('accounts')
      .selectAll()
      .where('id', '=', accountId)
      .executeTakeFirstOrThrow();
    return accountView(row, this.at);
  }
}

const REMOVED = {
  budget_limit: null,
  budget_window: null,
  budget_spent: 0,
  budget_window_start: 0,
} as const;
