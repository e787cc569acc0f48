import type { Kysely } from 'kysely';
import { ApiError } from '../errors/api-error.js';
import type { Database } from '../store/schema.js';
import type { Clock } from '../util/effects.js';
import { operatorRecordView, type OperatorRecordView } from './record-view.js';
import { recordNotFound } from './request-errors.js';
import type { RequestStore } from './request-store.js';

/** Most flagged records one listing returns (newest first). */
const LIST_LIMIT = 100;
const MAX_REASON_LENGTH = 1_000;

/**
 * Records whose upstream reported usage beyond the gateway's cap (chat/credible-usage.ts):
 * the bound was billed, the record flagged. An operator lists them and marks each reviewed with
 * a reason, once (a guarded update). Reviewing moves no money: what was billed stays billed.
 */
export class UsageReviewService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly records: RequestStore,
  ) {}

  async listFlagged(options: { includeReviewed: boolean }): Promise<OperatorRecordView[]> {
    const rows = await this.records.flagged({ ...options, limit: LIST_LIMIT });
    return rows.map(operatorRecordView);
  }

  async review(id: string, input: { reason: unknown }): Promise<OperatorRecordView> {
    const reason = input.reason;
    if (typeof reason !== 'string' || reason.trim() === '' || reason.length > MAX_REASON_LENGTH)
      throw new ApiError(
        'INVALID_INPUT',
        `reason is required: 1-${MAX_REASON_LENGTH} characters saying what was found`,
        'reason',
      );
    // The record's pending events first (request-store.ts `applyPending`): the review is of its row.
    const updated = await this.db.transaction().execute(async (trx) => {
      await this.records.applyPending(trx, id);
      return trx
        .updateTable('requests')
        .set({ usage_reviewed_at: this.clock.now(), usage_review: reason })
        .where('id', '=', id)
        .where('usage_flag', 'is not', null)
        .where('usage_reviewed_at', 'is', null)
        .executeTakeFirst();
    });
    const row = await this.records.byId(id);
    if (row === undefined) throw recordNotFound();
    if (updated.numUpdatedRows === 0n)
      throw new ApiError(
        'USAGE_REVIEW_NOT_ALLOWED',
        row.usage_flag === null
          ? `request ${id} has no usage beyond the cap to review`
          : `request ${id} was already reviewed`,
      );
    return operatorRecordView(row);
  }
}
