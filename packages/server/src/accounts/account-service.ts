import { createHash, randomBytes } from 'node:crypto';
import type { Account } from '@tollgate/protocol';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { ApiError, invalidInput, notFound } from '../errors/api-error.js';
import { parseInput, requiredAs, type Unparsed } from '../errors/input-schema.js';
import { type LedgerEffects } from '../billing/journal.js';
import { credit } from '../billing/account-money.js';
import { balanceLimitError, movementAmount } from '../billing/money.js';
import type { AuditWrite } from '../audit/audit-log.js';
import type { AccountTable, Database } from '../store/schema.js';
import { base62, type Clock } from '../util/effects.js';
import { budgetStateOf, budgetView } from '../budgets/budget-ledger.js';
import { DEFAULT_BUDGET_TIME_ZONE } from '../config/time-zone.js';

/** The account as the API shows it: the wire type of packages/protocol. */
export type AccountView = Account;

/** What a view needs to show a budget as of now: the clock and the budget time zone. */
export interface BudgetClock {
  readonly clock: Clock;
  readonly budgetTimeZone?: string;
}

export function accountView(row: AccountTable, at: BudgetClock): Account {
  return {
    object: 'account',
    id: row.id,
    email: row.email,
    balance: row.balance,
    held: row.held,
    available: row.balance - row.held,
    owed: row.owed,
    currency: 'CNY_MICRO',
    created_at: new Date(row.created_at).toISOString(),
    budget: budgetView(
      budgetStateOf(row, row.held, at.clock.now(), at.budgetTimeZone ?? DEFAULT_BUDGET_TIME_ZONE),
    ),
  };
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;
/** C0 and C1 control characters (NUL included): never part of an address, and they break logs. */
const CONTROL_CHARACTER = /\p{Cc}/u;

const NOT_AN_EMAIL = 'must be an email address';

/** A new account: its email, stored in lower case. */
const accountInput = z.object({
  email: requiredAs(
    NOT_AN_EMAIL,
    z
      .string({ error: NOT_AN_EMAIL })
      .regex(EMAIL, { error: NOT_AN_EMAIL })
      .refine((email) => !CONTROL_CHARACTER.test(email), {
        error: 'must not contain control characters',
      })
      .transform((email) => email.toLowerCase()),
  ),
});

const NOT_A_REFERENCE = 'must be a string of 1 to 200 characters';

/** An operator's top-up: the amount, once per reference (`topUp`). */
const topUpInput = z.object({
  amount: movementAmount,
  reference: requiredAs(
    NOT_A_REFERENCE,
    z
      .string({ error: NOT_A_REFERENCE })
      .min(1, { error: NOT_A_REFERENCE })
      .max(200, { error: NOT_A_REFERENCE }),
  ),
});

const NOT_A_TIME = 'must be an ISO 8601 time or epoch milliseconds';

/**
 * An optional time: an ISO 8601 string or epoch milliseconds, as epoch milliseconds; absent or
 * `null` is none (null). A Date holds at most ±8.64e15 ms: beyond that the time could not be
 * shown back as ISO 8601. Whether it must be in the future is the clock's rule (`refuseIfPast`).
 */
export const optionalTime = z
  .custom<number | string | null | undefined>(
    (value) => value === null || typeof value === 'number' || typeof value === 'string',
    { error: NOT_A_TIME },
  )
  .optional()
  .transform((value) => (typeof value === 'string' ? Date.parse(value) : (value ?? null)))
  .pipe(
    z
      .int({ error: NOT_A_TIME })
      .refine((time) => !Number.isNaN(new Date(time).getTime()), { error: NOT_A_TIME })
      .nullable(),
  );

/** Most codes one batch creates (one insert). */
const MAX_BATCH = 1_000;
const NOT_A_COUNT = `must be an integer from 1 to ${MAX_BATCH}`;

/** A batch of redemption codes (a single code is a batch of one): the clock judges `expires_at`. */
const redemptionBatchInput = z.object({
  amount: movementAmount,
  expires_at: optionalTime,
  count: requiredAs(
    NOT_A_COUNT,
    z
      .int({ error: NOT_A_COUNT })
      .min(1, { error: NOT_A_COUNT })
      .max(MAX_BATCH, { error: NOT_A_COUNT }),
  ),
});

const NOT_A_CODE = 'must be a redemption code';

/** A code redeemed into an account. */
const redeemInput = z.object({
  code: requiredAs(NOT_A_CODE, z.string({ error: NOT_A_CODE }).max(100, { error: NOT_A_CODE })),
});

/** A new redemption code, with its plaintext (shown once). */
export interface RedemptionCodeView {
  id: string;
  code: string;
  amount: number;
  expires_at: string | null;
}

/** Accounts, top-ups and redemption codes: the operator's side of money coming in. */
export class AccountService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly effects: LedgerEffects,
  ) {}

  /** `within`: the caller's transaction, when the account is made with something else (a sign-up). */
  async create(
    input: Unparsed<typeof accountInput>,
    within: Kysely<Database> = this.db,
  ): Promise<AccountView> {
    const { email } = parseInput(accountInput, input);
    const row: AccountTable = {
      id: this.effects.ids.next('acct'),
      email,
      balance: 0,
      held: 0,
      owed: 0,
      created_at: this.effects.clock.now(),
      budget_limit: null,
      budget_window: null,
      budget_window_start: 0,
      budget_spent: 0,
    };
    const inserted = await within
      .insertInto('accounts')
      .values(row)
      .onConflict((conflict) => conflict.doNothing())
      .executeTakeFirst();
    if (inserted.numInsertedOrUpdatedRows !== 1n)
      throw new ApiError(
        'IDEMPOTENCY_CONFLICT',
        `an account with email ${row.email} exists`,
        'email',
      );
    return accountView(row, this.effects);
  }

  async get(accountId: string): Promise<AccountView> {
    const row = await this.db
      .selectFrom('accounts')
      .selectAll()
      .where('id', '=', accountId)
      .executeTakeFirst();
    if (row === undefined) throw notFound('account');
    return accountView(row, this.effects);
  }

  /**
   * Credits `amount` once per `reference`: the same reference again with the same amount is a
   * replay (no second credit); with another amount it is a conflict. `amount` is at most one
   * movement's maximum, and a top-up that would take the balance above the maximum balance is
   * refused whole (400 naming `amount`; no top-up row, no journal entry). `audit` is written in
   * the credit's transaction (a replay credits nothing and writes nothing).
   */
  async topUp(
    accountId: string,
    input: Unparsed<typeof topUpInput>,
    audit?: AuditWrite,
  ): Promise<AccountView & { replayed: boolean }> {
    const { amount, reference } = parseInput(topUpInput, input);
    await this.get(accountId);
    const replayed = await this.db
      .transaction()
      .execute(async (trx) =>
        this.topUpWithin(trx, accountId, { amount, reference, source: 'admin' }, audit),
      );
    return { ...(await this.get(accountId)), replayed };
  }

  /**
   * The top-up inside a transaction the caller runs (an online payment credits in the same
   * transaction that marks its order paid): the top-up row (unique per account and reference),
   * the credit and its journal entry. Returns true for a replay (same reference and amount:
   * nothing credited); throws on a reference used for another amount (409) or a balance that
   * would pass the maximum (400 naming `amount`), so the caller's transaction rolls back whole.
   * `amount` must already be parsed (`movementAmount`).
   */
  async topUpWithin(
    trx: Kysely<Database>,
    accountId: string,
    input: { amount: number; reference: string; source: 'admin' | 'payment' },
    audit?: AuditWrite,
  ): Promise<boolean> {
    const { amount, reference } = input;
    const topupId = this.effects.ids.next('top');
    const inserted = await trx
      .insertInto('topups')
      .values({
        id: topupId,
        account_id: accountId,
        reference,
        amount,
        source: input.source,
        created_at: this.effects.clock.now(),
      })
      .onConflict((conflict) => conflict.columns(['account_id', 'reference']).doNothing())
      .executeTakeFirst();
    if (inserted.numInsertedOrUpdatedRows !== 1n) {
      const existing = await trx
        .selectFrom('topups')
        .select('amount')
        .where('account_id', '=', accountId)
        .where('reference', '=', reference)
        .executeTakeFirstOrThrow();
      if (existing.amount !== amount) {
        throw new ApiError(
          'IDEMPOTENCY_CONFLICT',
          `reference ${reference} was used for another amount`,
          'reference',
        );
      }
      return true;
    }
    const credited = await credit(trx, this.effects, {
      accountId,
      amount,
      kind: 'topup',
      topupId,
      reason: `top-up ${reference}`,
    });
    // Throwing rolls the top-up row back with it: the same reference stays free.
    if (credited.kind === 'balance_limit')
      throw balanceLimitError('amount', amount, credited.balance);
    await audit?.(trx, amount);
    return false;
  }

  /**
   * Creates a one-time code worth `amount` (at most one movement's maximum) that expires at
   * `expires_at` (in the future) or never; the plaintext code is returned once.
   */
  async createRedemptionCode(
    input: Omit<Unparsed<typeof redemptionBatchInput>, 'count'>,
  ): Promise<RedemptionCodeView> {
    const [code] = await this.createRedemptionCodes({ ...input, count: 1 });
    if (code === undefined) throw new Error('a batch of one made no code');
    return code;
  }

  /**
   * A batch of `count` (1 to 1,000) such codes, all or none (one insert); each plaintext code is
   * returned once, here.
   */
  async createRedemptionCodes(
    input: Unparsed<typeof redemptionBatchInput>,
  ): Promise<RedemptionCodeView[]> {
    return (await this.createRedemptionBatch(input)).codes;
  }

  /**
   * The same, with the batch the codes belong to (`redemption_batches`, migrations/040): the
   * batch row and its codes are written in one transaction, so a batch's count is its codes'.
   */
  async createRedemptionBatch(
    input: Unparsed<typeof redemptionBatchInput>,
  ): Promise<{ batch_id: string; codes: RedemptionCodeView[] }> {
    const { amount, expires_at: expiresAt, count } = parseInput(redemptionBatchInput, input);
    refuseIfPast(expiresAt, 'expires_at', this.effects.clock);
    const now = this.effects.clock.now();
    const batchId = this.effects.ids.next('rdb');
    const codes = Array.from({ length: count }, () => ({
      id: this.effects.ids.next('rdm'),
      code: `TGR-${base62(randomBytes(20))}`,
    }));
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('redemption_batches')
        .values({
          id: batchId,
          amount,
          count,
          expires_at: expiresAt,
          created_at: now,
          voided_at: null,
        })
        .execute();
      await trx
        .insertInto('redemption_codes')
        .values(
          codes.map(({ id, code }) => ({
            id,
            code_hash: hashCode(code),
            amount,
            created_at: now,
            expires_at: expiresAt,
            redeemed_by: null,
            redeemed_at: null,
            batch_id: batchId,
            voided_at: null,
          })),
        )
        .execute();
    });
    const expires = expiresAt === null ? null : new Date(expiresAt).toISOString();
    return {
      batch_id: batchId,
      codes: codes.map(({ id, code }) => ({ id, code, amount, expires_at: expires })),
    };
  }

  /**
   * Redeems a code into an account, once: the code is claimed with a guarded update. A code that
   * would take the balance above the maximum balance is refused (400 naming `code`) and stays
   * unredeemed. `audit` (an operator redeeming for an account) is written in its transaction.
   */
  async redeem(
    accountId: string,
    input: Unparsed<typeof redeemInput>,
    audit?: AuditWrite,
  ): Promise<AccountView> {
    const codeHash = hashCode(parseInput(redeemInput, input).code);
    await this.get(accountId);
    await this.db.transaction().execute(async (trx) => {
      const now = this.effects.clock.now();
      const claimed = await trx
        .updateTable('redemption_codes')
        .set({ redeemed_by: accountId, redeemed_at: now })
        .where('code_hash', '=', codeHash)
        .where('redeemed_at', 'is', null)
        // A code of a batch an operator voided is refused like a used one (migrations/040).
        .where('voided_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .returning(['id', 'amount'])
        .executeTakeFirst();
      if (claimed === undefined)
        throw new ApiError(
          'NOT_FOUND',
          'no such redemption code, or it was used, voided or has expired',
          'code',
        );
      const topupId = this.effects.ids.next('top');
      await trx
        .insertInto('topups')
        .values({
          id: topupId,
          account_id: accountId,
          reference: `redemption:${claimed.id}`,
          amount: claimed.amount,
          source: 'redemption',
          created_at: now,
        })
        .execute();
      const credited = await credit(trx, this.effects, {
        accountId,
        amount: claimed.amount,
        kind: 'redemption',
        topupId,
        reason: `redemption ${claimed.id}`,
      });
      // Throwing rolls back the claim and the top-up row: the code can be redeemed elsewhere.
      if (credited.kind === 'balance_limit')
        throw balanceLimitError('code', claimed.amount, credited.balance);
      await audit?.(trx, claimed.amount);
    });
    return this.get(accountId);
  }
}

function hashCode(code: string): string {
  return createHash('sha256').update(code.trim()).digest('hex');
}

/**
 * The clock's rule for an expiry (an `optionalTime` already parsed): none, or after now. A past
 * one is the 400 naming `field`.
 */
export function refuseIfPast(time: number | null, field: string, clock: { now(): number }): void {
  if (time !== null && time <= clock.now())
    throw invalidInput(
      field,
      `is in the past (${new Date(time).toISOString()}); give a future time or none`,
    );
}
