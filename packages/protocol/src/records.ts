import type { ErrorBody } from './errors.js';
import type { Currency, MicroYuan } from './money.js';

/**
 * Where a business request is (docs/requests.md, "The record"):
 * - `processing`: running;
 * - `succeeded`: confirmed, priced and captured (its `result` is shown);
 * - `failed`: a confirmed failure, hold released (`error` says why);
 * - `awaiting_funds`: the result is ready but costs more than was available: the hold is kept and
 *   `POST /v1/requests/{id}/settle` captures it after a top-up (`canSettle` true);
 * - `submission_unknown`: the outcome was not confirmed; the hold is kept for reconciliation;
 * - `resolved`: an operator captured or released a `submission_unknown` hold (`resolution`);
 * - `accepted`: the request created an image or video task (202, `task_id`); the task carries
 *   the rest and is settled at its own `settlement.url`.
 */
export type RequestStatus =
  | 'processing'
  | 'succeeded'
  | 'failed'
  | 'submission_unknown'
  | 'awaiting_funds'
  | 'resolved'
  | 'accepted';

/** A hold's life: `open` (money reserved), then `captured` or `released`, once. */
export type HoldState = 'open' | 'captured' | 'released';

/** The reserve of a request: the hold taken before the upstream call. */
export interface RecordReserve {
  /** `hold_…`. */
  id: string;
  /** The amount held, micro-yuan (the worst case of the request, or a task's quoted amount). */
  amount: MicroYuan | null;
  /** `null` only if the hold row could not be read with the record. */
  state: HoldState | null;
  currency: Currency;
}

/** What a token line item counts (docs/billing.md, "Line items"). */
export type TokenLineItemName =
  | 'input'
  | 'cache_read'
  | 'cache_write'
  | 'cache_write_1h'
  | 'audio_input'
  | 'image_input'
  | 'output'
  | 'reasoning'
  | 'audio_output'
  | 'image_output';

/**
 * One line of a token bill: `amount = ceil(units × price_per_million / 1 000 000)`, rounded up
 * once, for the whole request.
 */
export interface TokenLineItem {
  /**
   * `input`: input tokens neither read from nor written to the prompt cache; `cache_read`;
   * `cache_write` (5-minute cache); `cache_write_1h`; `audio_input` and `image_input`: uncached
   * input tokens of audio and images, apart only where the model prices them apart; `output`:
   * visible output; `reasoning`; `audio_output` and `image_output`, likewise.
   */
  item: TokenLineItemName;
  /** Tokens. */
  units: number;
  /** Micro-yuan per 1 000 000 tokens, as the request's price version, tier and service tier say. */
  price_per_million: MicroYuan;
  amount: MicroYuan;
}

/**
 * A chat request's fees: `request` (`per_request`, `units` 1) and `tool_call` (`per_tool_call`,
 * `units` the tool calls of the answer): `amount = units × unit_price`.
 */
export interface RequestFeeLineItem {
  item: 'request' | 'tool_call';
  units: number;
  /** Micro-yuan per request, or per tool call. */
  unit_price: MicroYuan;
  amount: MicroYuan;
}

/** One line of a request's bill (docs/billing.md, "Line items"). */
export type BillLineItem = TokenLineItem | RequestFeeLineItem;

/** The bill of a request: what its usage costs, whether or not it was captured yet. */
export interface RecordBill {
  /** Micro-yuan, a safe integer (0 for a free request such as a share). */
  amount: MicroYuan;
  currency: Currency;
  /** `<model>@<version>` of the prices used; `null` when no price list applied. */
  price_version: string | null;
  /** The computation with its numbers, for people. */
  pricing_rule: string | null;
  /**
   * What `amount` is made of, when it was priced by token line items (chat, embeddings, rerank):
   * their `amount`s sum to it, and each can be recomputed from its units and price alone.
   * `null` when the bill has no line items: records priced before line items were kept, free
   * requests, an operator's resolution, an answer not charged (zero-completion insurance), or a
   * look-up whose price was capped at the hold.
   */
  line_items: BillLineItem[] | null;
  /** Whether the amount was taken from the balance (false while `awaiting_funds`). */
  captured: boolean;
}

/** Usage the upstream reported beyond what the gateway allowed (docs/billing.md, "Usage beyond the cap"). */
export interface UsageExceededCap {
  /** What was reported and what was billed instead (the bound). */
  detail: string;
  /** ISO 8601 time an operator reviewed it; `null` until then. */
  reviewed_at: string | null;
  /** The operator's note; `null` until reviewed. */
  review: string | null;
}

/**
 * Usage the gateway counted because the upstream reported none: `detail` names the rule and the
 * figures; an operator may review it as it reviews usage beyond the cap.
 */
export type UsageCountedLocally = UsageExceededCap;

/** Where and how to settle an `awaiting_funds` record (an empty body). */
export interface RecordSettlement {
  /** `/v1/requests/{id}/settle`. */
  url: string;
  method: 'POST';
}

/**
 * How a held record was resolved after the fact: the caller settled it (`settled`), or an
 * operator captured `amount` or released the hold of a `submission_unknown` record.
 */
export type RequestResolution =
  | {
      action: 'settled';
      /** The `Idempotency-Key` of the settle call; its repeat replays the success. */
      idempotency_key: string;
      /** ISO 8601. */
      at: string;
    }
  | {
      action: 'capture' | 'release';
      /** Micro-yuan captured; 0 for a release. */
      amount: MicroYuan;
      reason: string;
      /** `lookup`: the reconciler asked the upstream (docs/requests.md "Reconciled by look-up"). */
      by: 'operator' | 'lookup';
      /** ISO 8601. */
      at: string;
    };

/**
 * The original request record (`GET /v1/requests/{id}`, `GET /v1/requests?idempotency_key=`;
 * spec 2.2, docs/requests.md): readable only with the key that made the request. Every field is
 * always present; those that do not apply are `null`.
 */
export interface RequestRecord {
  object: 'request';
  /** `req_…`: the `X-Service-Request-Id` of the original request. */
  id: string;
  idempotency_key: string;
  method: string;
  /** The route called, e.g. `/v1/embeddings`. */
  path: string;
  /** The public model id, when the route names one. */
  model: string | null;
  status: RequestStatus;
  /** The status the request was answered with; 402 while `awaiting_funds`; `null` while `processing`. */
  http_status: number | null;
  /**
   * The verified response body as the route answered it (an embeddings list, a chat completion,
   * a task's 202): shown only when `succeeded` or `accepted`; otherwise `null` (kept, not shown,
   * while `awaiting_funds`).
   */
  result: unknown;
  /** The error the request was answered with (`failed`, `submission_unknown`, `resolved`); else `null`. */
  error: ErrorBody['error'] | null;
  /** Token counts and the like, as the upstream reported them and the bill used; `null` without a priced result. */
  usage: Record<string, number> | null;
  /** The hold, when the request took one. */
  reserve: RecordReserve | null;
  /**
   * The bill, once the request was priced; `bill.pricing_rule` is the only rule on the record.
   * Without a bill, `error` says why the request ended and `reserve.state` what became of its hold.
   */
  bill: RecordBill | null;
  /** Set when the upstream reported usage beyond the cap and the bound was billed instead. */
  usage_exceeded_cap: UsageExceededCap | null;
  /**
   * Set when a stream finished without the upstream reporting usage and the gateway counted it
   * by its documented estimate (docs/billing.md, "A stream that ends without usage").
   */
  usage_counted_locally: UsageCountedLocally | null;
  /** True only while `POST /v1/requests/{id}/settle` may settle it (`awaiting_funds`). */
  canSettle: boolean;
  /** Present (not `null`) exactly when `canSettle` is true. */
  settlement: RecordSettlement | null;
  /** The upstream's own id for the call, when it gave one; never ours. */
  upstream_request_id: string | null;
  /** The task this request created (`accepted`); the task settles at its own `settlement.url`. */
  task_id: string | null;
  /** How the record was settled or resolved, when it was. */
  resolution: RequestResolution | null;
  /** ISO 8601. */
  created_at: string;
  /** ISO 8601 time of the latest change. */
  updated_at: string;
}
