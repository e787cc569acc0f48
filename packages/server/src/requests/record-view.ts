import type {
  BillLineItem,
  ChannelAttempt,
  ErrorBody,
  OperatorRequestRecord,
  RequestRecord,
  RequestResolution,
  UsageExceededCap,
} from '@tollgate/protocol';
import { z } from 'zod';
import type { ChannelAttempt as RouterChannelAttempt } from '../routing/channel-router.js';
import type { HoldState, RequestTable } from '../store/schema.js';
import { parseStoredJson } from '../store/stored-json.js';
import { COUNTED_LOCALLY } from '../chat/token-estimate.js';

export type RecordRow = RequestTable & { hold_state: HoldState | null };

/**
 * The original request record as callers read it (docs/requests.md). The result appears only
 * once it is confirmed and priced (`succeeded`); while awaiting funds it is kept but not shown.
 */
export function recordView(row: RecordRow): RequestRecord {
  const stored = row.response_body === null ? null : (JSON.parse(row.response_body) as unknown);
  const isError = row.http_status !== null && row.http_status >= 400;
  // A task's creation record shows the task as it was created (202); the task is read at its own path.
  const resultVisible = (row.status === 'succeeded' || row.status === 'accepted') && !isError;
  // One column holds the note an operator reviews; its first word says which kind it is.
  const countedLocally = row.usage_flag?.startsWith(COUNTED_LOCALLY) === true;
  return {
    object: 'request' as const,
    id: row.id,
    idempotency_key: row.idempotency_key,
    method: row.method,
    path: row.path,
    model: row.model,
    status: row.status,
    http_status: row.status === 'awaiting_funds' ? 402 : row.http_status,
    result: resultVisible ? stored : null,
    error: isError && stored !== null ? (stored as ErrorBody).error : null,
    usage: row.usage === null ? null : (JSON.parse(row.usage) as Record<string, number>),
    reserve:
      row.hold_id === null
        ? null
        : {
            id: row.hold_id,
            amount: row.reserve_amount,
            state: row.hold_state,
            currency: 'CNY_MICRO' as const,
          },
    bill:
      row.amount === null
        ? null
        : {
            amount: row.amount,
            currency: 'CNY_MICRO' as const,
            price_version: row.price_version,
            pricing_rule: row.pricing_rule,
            // Null for a bill without line items, records priced before them included.
            line_items:
              row.line_items === null ? null : (JSON.parse(row.line_items) as BillLineItem[]),
            captured: row.hold_state === 'captured',
          },
    /**
     * Set when the upstream reported usage beyond what the gateway allowed: the bound was billed
     * instead (docs/billing.md "Usage beyond the cap"); `reviewed_at` once an operator looked.
     */
    usage_exceeded_cap: countedLocally ? null : usageNote(row),
    /** Set when the gateway counted a stream's usage the upstream did not report. */
    usage_counted_locally: countedLocally ? usageNote(row) : null,
    canSettle: row.status === 'awaiting_funds',
    settlement:
      row.status === 'awaiting_funds'
        ? { url: `/v1/requests/${row.id}/settle`, method: 'POST' }
        : null,
    upstream_request_id: row.upstream_request_id,
    /** The task this request created; a task settles at its own `settlement.url`, never here. */
    task_id: row.task_id,
    resolution: row.resolution === null ? null : (JSON.parse(row.resolution) as RequestResolution),
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

export type RecordView = ReturnType<typeof recordView>;

/** What an operator sees (admin API, CLI): the caller's view, whose it is, how it ended. */
/** A record's usage note (`usage_flag`) with its review. */
function usageNote(row: RecordRow): UsageExceededCap | null {
  if (row.usage_flag === null) return null;
  return {
    detail: row.usage_flag,
    reviewed_at:
      row.usage_reviewed_at === null ? null : new Date(row.usage_reviewed_at).toISOString(),
    review: row.usage_review,
  };
}

/**
 * `requests.channel_attempts`: every channel tried, in order, as the router noted them
 * (routing/channel-router.ts `ChannelAttempt`, written by record-outcome.ts); the wire's
 * `ChannelAttempt` (both ways, below). Read for operators only, so parsed with its schema; the
 * caller's view above reads its columns as stored (docs/architecture.md, "Validation at the
 * boundary": it is every record read and every row of the listings and their CSV export).
 */
const channelAttemptsSchema = z.array(
  z.strictObject({
    channel: z.string(),
    upstream: z.string(),
    outcome: z.enum(['succeeded', 'not_processed', 'maybe_processed', 'refused']),
    detail: z.string().nullable(),
  }),
);
type StoredChannelAttempt = z.output<typeof channelAttemptsSchema>[number];
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameAsWritten: [
  Same<StoredChannelAttempt, ChannelAttempt>,
  Same<StoredChannelAttempt, RouterChannelAttempt>,
] = [true, true];
void sameAsWritten;

export function operatorRecordView(row: RecordRow): OperatorRequestRecord {
  return {
    ...recordView(row),
    key_id: row.key_id,
    account_id: row.account_id,
    // The same column as `bill.pricing_rule`: shown here only when no bill shows it.
    ending_rule: row.amount === null ? row.pricing_rule : null,
    channel: row.channel,
    channel_attempts:
      row.channel_attempts === null
        ? []
        : parseStoredJson(channelAttemptsSchema, row.channel_attempts, {
            table: 'requests',
            column: 'channel_attempts',
            id: row.id,
          }),
    channel_cost: row.channel_cost === null ? null : Number(row.channel_cost),
  };
}

export type OperatorRecordView = ReturnType<typeof operatorRecordView>;
