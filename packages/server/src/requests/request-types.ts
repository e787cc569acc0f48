import type { BillLineItem } from '@tollgate/protocol';
import type { Kysely } from 'kysely';
import type { Principal } from '../auth/key-service.js';
import type { ApiError } from '../errors/api-error.js';
import type { ChannelAttempt } from '../routing/channel-router.js';
import type { Database } from '../store/schema.js';

/**
 * The shapes the request service takes and gives (request-service.ts re-exports them), below it
 * so that the files it calls (record-outcome.ts, the batchers) can name them without importing
 * the service back.
 */

/** What the caller asked for, as the record remembers it. */
export interface RequestIdentity {
  readonly requestId: string;
  readonly principal: Principal;
  readonly idempotencyKey: string;
  readonly fingerprint: string;
  readonly method: string;
  readonly path: string;
  readonly model: string | null;
}

export interface Reserve {
  readonly amount: number;
  readonly priceVersion: string;
}

/** How an operation ended, as the provider call reports it. */
export type Outcome =
  /** Confirmed result with priced usage. */
  | {
      kind: 'succeeded';
      body: unknown;
      usage: Record<string, number>;
      amount: number;
      pricingRule: string;
      upstreamRequestId: string | null;
      /** The success status to answer and replay (default 200; uploads 201). */
      status?: number;
      /** Set when the upstream reported usage beyond the gateway's cap and the cap was billed instead. */
      usageFlag?: string;
      /** What the serving channel charges the operator (its `cost` prices); null or absent: none. */
      channelCost?: number | null;
      /** What `amount` is made of (`bill.line_items`); absent: a bill without line items. */
      lineItems?: readonly BillLineItem[];
    }
  /** Confirmed failure: nothing was delivered, nothing is charged; the hold is released. */
  | { kind: 'failed'; error: ApiError; upstreamRequestId: string | null; rule?: string }
  /** Not confirmed either way: the hold is kept for reconciliation or an operator. */
  | { kind: 'unknown'; error: ApiError; upstreamRequestId: string | null; rule?: string };

/** Streams also record what the caller was sent, to replay it. */
export type RecordedOutcome = Outcome & {
  transcript?: readonly string[];
  /** The channel that served the request and every attempt (docs/routing.md). */
  routing?: RoutingTrail;
};

/** Which channels a request tried, written on its record. */
export interface RoutingTrail {
  readonly channel: string | null;
  readonly attempts: readonly ChannelAttempt[];
}

export type Claim =
  | { kind: 'claimed'; holdId: string | null }
  | {
      kind: 'replay';
      status: number;
      body: unknown;
      requestId: string;
      transcript: string[] | null;
      /** The answer of a task created just now by this very claim (not a replay of an earlier one). */
      fresh?: boolean;
    }
  | { kind: 'refused'; error: ApiError };

/** Work done inside a claim's transaction, and the answer the record keeps; see `RequestService.claim`. */
export type InsideClaim = (
  trx: Kysely<Database>,
  holdId: string | null,
) => Promise<{
  status: number;
  body: unknown;
  taskId: string | null;
  /** What the record's bill says (a settlement, a free share); tasks are billed on the task. */
  rule?: string;
}>;

/** The answer to send for a finished operation. */
export interface Answer {
  status: number;
  body: unknown;
  /**
   * `body` as JSON, when it was serialised already: the very text written into the record, so
   * that a fresh answer and a replay of it are the same bytes and the body is stringified once.
   */
  json?: string;
}
