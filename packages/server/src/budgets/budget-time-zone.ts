import { sql, type Kysely } from 'kysely';
import { invalidInput } from '../errors/api-error.js';
import type { Database } from '../store/schema.js';
import type { Clock } from '../util/effects.js';
import { isKnownTimeZone } from '../config/time-zone.js';
import { windowStarts, type BudgetWindow } from './budget-windows.js';

/**
 * One budget time zone for the whole deployment (docs/billing.md, "One time zone for the
 * deployment"). A budget row keeps the start of the window its spend belongs to; an instance
 * counting in another zone computes other starts, takes the row's for an older window, counts
 * its spend as 0 and moves the start: a spent window reopens, back and forth between instances.
 * So the zone is stored in the database (`deployment_settings`, migration
 * `033-deployment-settings`), recorded by the first instance to start, and an instance or CLI
 * command configured with another zone refuses to start. Changing it is one deliberate command
 * (`tollgate budgets time-zone ZONE`), run with every instance stopped.
 */
const SETTING = 'budget_time_zone';

/** The configured zone is not the deployment's: said for an operator, on one line. */
export class BudgetTimeZoneMismatch extends Error {
  override readonly name = 'BudgetTimeZoneMismatch';
  constructor(
    readonly configured: string,
    readonly stored: string,
  ) {
    super(
      `budget_time_zone is ${configured} in this configuration, but this deployment counts ` +
        `budget windows in ${stored} (stored in its database): set budget_time_zone: ${stored}, ` +
        `or stop every instance and run tollgate budgets time-zone ${configured} ` +
        `(docs/billing.md, "One time zone for the deployment")`,
    );
  }
}

/** The deployment's zone as stored, or undefined before any instance recorded one. */
export async function storedBudgetTimeZone(db: Kysely<Database>): Promise<string | undefined> {
  const row = await db
    .selectFrom('deployment_settings')
    .select('value')
    .where('name', '=', SETTING)
    .executeTakeFirst();
  return row?.value;
}

/**
 * At start (every instance, every CLI command that counts budgets): records `configured` as the
 * deployment's zone when none is stored yet (instances starting together on a fresh database:
 * the first insert wins, the others read it back), then refuses a zone that differs.
 */
export async function agreeOnBudgetTimeZone(
  db: Kysely<Database>,
  configured: string,
  clock: Clock,
): Promise<void> {
  await db
    .insertInto('deployment_settings')
    .values({ name: SETTING, value: configured, updated_at: clock.now() })
    .onConflict((conflict) => conflict.column('name').doNothing())
    .execute();
  const stored = await storedBudgetTimeZone(db);
  if (stored !== configured) throw new BudgetTimeZoneMismatch(configured, stored ?? 'none');
}

export interface BudgetTimeZoneChange {
  readonly budget_time_zone: string;
  readonly previous: string;
  /** Budgets (accounts, keys) whose current window's spend was carried into the new zone's. */
  readonly carried: { readonly accounts: number; readonly keys: number };
}

const WINDOWED: readonly Exclude<BudgetWindow, 'total'>[] = ['daily', 'weekly', 'monthly'];

/**
 * `tollgate budgets time-zone ZONE`: makes `zone` the deployment's, in one transaction with the
 * budgets' move. What a budget spent in its current window (in the old zone) counts as spent in
 * the new zone's current window, so the change never reopens a spent window; a window already
 * over counts nothing, as before. The new zone's window may end later than the old one would
 * have (a spend is never forgotten early). `current` is the caller's configured zone, taken as
 * the old one when no instance has recorded any yet. Instances still running in the old zone
 * would take the moved starts for older windows: the procedure stops them first.
 */
export async function changeBudgetTimeZone(
  db: Kysely<Database>,
  input: { readonly zone: string; readonly current: string },
  clock: Clock,
): Promise<BudgetTimeZoneChange> {
  const { zone } = input;
  if (!isKnownTimeZone(zone))
    throw invalidInput(SETTING, 'must be an IANA time zone such as Asia/Shanghai');
  return db.transaction().execute(async (trx) => {
    const now = clock.now();
    const previous = (await storedBudgetTimeZone(trx)) ?? input.current;
    await trx
      .insertInto('deployment_settings')
      .values({ name: SETTING, value: zone, updated_at: now })
      .onConflict((conflict) =>
        conflict.column('name').doUpdateSet({ value: zone, updated_at: now }),
      )
      .execute();
    if (previous === zone)
      return { budget_time_zone: zone, previous, carried: { accounts: 0, keys: 0 } };
    const before = windowStarts(now, previous);
    const after = windowStarts(now, zone);
    const carried = { accounts: 0, keys: 0 };
    for (const table of ['accounts', 'api_keys'] as const)
      for (const window of WINDOWED) {
        const old = before[window];
        const moved = after[window];
        // One statement: every right-hand side reads the row as it was. A row of an older
        // window gets start 0, which no current window has, so its spend stays forgotten.
        await trx
          .updateTable(table)
          .set({
            budget_spent: sql<number>`case when budget_window_start = ${old} then budget_spent else 0 end`,
            budget_window_start: sql<number>`case when budget_window_start = ${old} then cast(${moved} as bigint) else 0 end`,
          })
          .where('budget_window', '=', window)
          .execute();
        const count = await trx
          .selectFrom(table)
          .select((select) => select.fn.countAll<number | string>().as('n'))
          .where('budget_window', '=', window)
          .where('budget_window_start', '=', moved)
          .executeTakeFirstOrThrow();
        carried[table === 'accounts' ? 'accounts' : 'keys'] += Number(count.n);
      }
    return { budget_time_zone: zone, previous, carried };
  });
}
