import type { RedemptionBatch, RedemptionBatchList } from '@tollgate/protocol';
import { sql, type Kysely } from 'kysely';
import { notFound } from '../errors/api-error.js';
import { afterCursor, listPage, parseLimit } from '../util/list-page.js';
import type { Database, RedemptionBatchTable } from '../store/schema.js';
import type { Clock } from '../util/effects.js';
import { exactSum, safeAmount } from '../billing/exact-sum.js';

/** What an operator may page the batches by; each field as it came (the query string). */
export interface BatchQuery {
  readonly limit?: unknown;
  readonly after?: unknown;
}

/** What a void did: the batch after it, and how many codes this call voided. */
export interface VoidedBatch {
  readonly batch: RedemptionBatch;
  readonly voided_now: number;
  /** Micro-yuan of the codes this call voided (their value, never credited). */
  readonly voided_amount: number;
}

/**
 * Redemption code batches (docs/console.md, "Redemption codes"): one per creation call
 * (`AccountService.createRedemptionBatch`), listed newest first with how many of their codes
 * were redeemed or voided, and voided as a whole: every code of the batch neither redeemed nor
 * voided yet is marked voided in one guarded update, so a redeemed code is never touched and a
 * code being redeemed at that instant is either redeemed (the void skips it) or voided (the
 * redemption's own guarded claim finds nothing) — never both.
 */
export class RedemptionBatches {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  /** Newest first by (`created_at`, `id`): index `redemption_batches_created`. */
  async list(query: BatchQuery): Promise<RedemptionBatchList> {
    const limit = parseLimit(query.limit, 20);
    let select = this.db.selectFrom('redemption_batches').selectAll();
    const after = await afterCursor(
      this.db,
      'redemption_batches',
      query.after,
      'is not a batch id',
    );
    if (after !== undefined) select = select.where(after);
    const rows = await select
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    const counts = await this.countsOf(rows.slice(0, limit).map((row) => row.id));
    return listPage(rows, limit, (row) => batchView(row, counts.get(row.id)));
  }

  async get(batchId: string): Promise<RedemptionBatch> {
    const row = await this.db
      .selectFrom('redemption_batches')
      .selectAll()
      .where('id', '=', batchId)
      .executeTakeFirst();
    if (row === undefined) throw notFound('redemption code batch');
    return batchView(row, (await this.countsOf([row.id])).get(row.id));
  }

  /**
   * Voids the batch's unredeemed codes (idempotent: a second call voids none). `audit` is
   * written in the same transaction with what this call voided.
   */
  async void(
    batchId: string,
    audit?: (trx: Kysely<Database>, voided: { count: number; amount: number }) => Promise<void>,
  ): Promise<VoidedBatch> {
    const voided = await this.db.transaction().execute(async (trx) => {
      const batch = await trx
        .selectFrom('redemption_batches')
        .select(['id', 'amount'])
        .where('id', '=', batchId)
        .executeTakeFirst();
      if (batch === undefined) throw notFound('redemption code batch');
      const now = this.clock.now();
      const updated = await trx
        .updateTable('redemption_codes')
        .set({ voided_at: now })
        .where('batch_id', '=', batchId)
        .where('redeemed_at', 'is', null)
        .where('voided_at', 'is', null)
        .executeTakeFirst();
      const count = Number(updated.numUpdatedRows);
      await trx
        .updateTable('redemption_batches')
        .set({ voided_at: now })
        .where('id', '=', batchId)
        .where('voided_at', 'is', null)
        .execute();
      const amount = count * Number(batch.amount);
      await audit?.(trx, { count, amount });
      return { count, amount };
    });
    return {
      batch: await this.get(batchId),
      voided_now: voided.count,
      voided_amount: voided.amount,
    };
  }

  /** Each batch's code counts: index `redemption_codes_batch` (a batch has at most 1,000). */
  private async countsOf(batchIds: readonly string[]): Promise<Map<string, Counts>> {
    if (batchIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('redemption_codes')
      .select([
        'batch_id',
        sql<string>`cast(count(*) as text)`.as('codes'),
        sql<string>`cast(count(redeemed_at) as text)`.as('redeemed'),
        sql<string>`cast(count(voided_at) as text)`.as('voided'),
        exactSum('case when redeemed_at is not null then amount else 0 end').as('redeemed_amount'),
      ])
      .where('batch_id', 'in', batchIds)
      .groupBy('batch_id')
      .execute();
    return new Map(
      rows.map((row) => [
        row.batch_id ?? '',
        {
          codes: Number(row.codes),
          redeemed: Number(row.redeemed),
          voided: Number(row.voided),
          redeemedAmount: safeAmount(row.redeemed_amount),
        },
      ]),
    );
  }
}

interface Counts {
  codes: number;
  redeemed: number;
  voided: number;
  redeemedAmount: number;
}

function batchView(row: RedemptionBatchTable, counts: Counts | undefined): RedemptionBatch {
  const codes = counts?.codes ?? 0;
  const redeemed = counts?.redeemed ?? 0;
  const voided = counts?.voided ?? 0;
  return {
    object: 'redemption_batch',
    id: row.id,
    amount: Number(row.amount),
    created_at: new Date(Number(row.created_at)).toISOString(),
    expires_at: row.expires_at === null ? null : new Date(Number(row.expires_at)).toISOString(),
    codes,
    redeemed,
    redeemed_amount: counts?.redeemedAmount ?? 0,
    voided,
    unredeemed: codes - redeemed - voided,
    voided_at: row.voided_at === null ? null : new Date(Number(row.voided_at)).toISOString(),
  };
}
