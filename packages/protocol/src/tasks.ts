import type { Currency, MicroYuan } from './money.js';
import type { LineItem } from './quotes.js';

/** The task families: `POST /v1/images/generations`, `POST /v1/videos` and `POST /v1/h3/tasks`. */
export type TaskKind = 'image' | 'video' | 'h3';

/**
 * Where the work is (docs/tasks.md, "States"): `queued` (not sent yet), `running` (the upstream
 * has it), `succeeded` (outputs stored and priced), `failed` (see `error`; the billing state says
 * whether it costs anything), `submission_unknown` (the upstream may have it, unconfirmed: the
 * hold is kept, it is never submitted again, a look-up or an operator resolves it).
 */
export type TaskStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'submission_unknown';

/**
 * The statuses in which a task is not finished: it may still move, and still needs the assets it
 * references and its hold (the gateway refuses to delete such an asset; a client keeps waiting).
 */
export const UNFINISHED_TASK_STATUSES: readonly TaskStatus[] = [
  'queued',
  'running',
  'submission_unknown',
];

/**
 * Where the money is, apart from the work: `reserved` (the quoted amount is held, nothing priced
 * yet), `pending` (priced: `actual_amount` shown, awaiting the caller's settlement), `settled`
 * (captured; outputs delivered), `released` (nothing charged, the hold went back), `expired` (it
 * awaited settlement past `settlement.expires_at`: nothing charged, the hold went back, the
 * outputs were deleted; a settle is 409 `SETTLEMENT_EXPIRED`).
 */
export type TaskBillingState = 'reserved' | 'pending' | 'settled' | 'released' | 'expired';

/** The quote the task was created with, as it was held. */
export interface TaskQuote {
  /** The amount held at creation, micro-yuan; a positive safe integer. */
  quoted_amount: MicroYuan;
  /** `<model>@<version>` of the prices the task is billed at, from creation to settlement. */
  price_version: string;
  currency: Currency;
  /** How `quoted_amount` adds up (the quote's line items). */
  line_items: LineItem[];
}

/** The task's money (spec 2.5, the billing object). */
export interface TaskBilling {
  /** True exactly while `state` is `pending`: the task awaits settlement. */
  settlement_pending: boolean;
  /**
   * What the work costs, micro-yuan, priced from what the upstream delivered (never above the
   * quote): a positive safe integer. Present only once priced at a cost (`state` `pending` or
   * `settled`); absent while `reserved` and when nothing is charged. The settle body echoes it.
   */
  actual_amount?: MicroYuan;
  /** `<model>@<version>` of the prices used; the settle body echoes it. */
  price_version: string;
  /** The amount held for the task, micro-yuan (its quoted amount). */
  reserved_amount: MicroYuan;
  /** What settlement captured, micro-yuan; 0 until `state` is `settled`. */
  settled_amount: MicroYuan;
  state: TaskBillingState;
  currency: Currency;
  /** How `actual_amount` adds up. Present once the task was priced (delivery or a billed failure). */
  line_items?: LineItem[];
  /** The rule that priced the task or decided that it costs nothing, for people. Present once priced or ended. */
  pricing_rule?: string;
}

/** Where and how to settle. */
export interface TaskSettlement {
  /** `/v1/images/{id}/settle`, `/v1/videos/{id}/settle` or `/v1/h3/tasks/{id}/settle`, on the gateway's origin. */
  url: string;
  method: 'POST';
  /**
   * ISO 8601: when the settlement window (`tasks.settlement_window_ms`, default 7 days from
   * pricing) closes. Not settled by then, the task expires: nothing charged, the hold released,
   * the outputs deleted, and a settle is 409 `SETTLEMENT_EXPIRED`.
   */
  expires_at: string;
}

/** One delivered output: an asset of the creating account. */
export interface TaskOutput {
  asset_id: string;
  /** `image/png`, `image/jpeg`, `image/webp` or `video/mp4`. */
  media_type: string;
  /** Size of the stored file in bytes. */
  bytes: number;
  /** Pixels, when the gateway could read them from the file; else `null`. */
  width: number | null;
  height: number | null;
  /** Videos: seconds of the delivered file; `null` for images. */
  seconds: number | null;
  /**
   * Where to read it with the creating key: `/v1/videos/{id}/content` for a video,
   * `/v1/assets/{asset_id}/content` for an image (Range supported).
   */
  content_url: string;
}

/** Why a task failed. */
export interface TaskError {
  /**
   * A short code: one of ours (`UPSTREAM_ERROR`, …), the upstream's own for a failure it
   * reported, or `NOT_RUN` after an operator released the task.
   */
  code: string;
  message: string;
}

/** How an operator resolved a `submission_unknown` task (docs/tasks.md, "The worker"). */
export interface TaskResolution {
  /** `release`: the upstream never ran it (failed, hold released); `attach`: found it, runs on. */
  action: 'release' | 'attach';
  reason: string;
  by: 'operator';
  /** ISO 8601 time of the resolution. */
  at: string;
  /** The upstream's task id the operator attached; present for `attach` only. */
  upstream_task_id?: string;
}

/**
 * An image or video task as its creating key reads it (`GET /v1/images/{id}`,
 * `GET /v1/videos/{id}`; the 202 of creation; the 200 of settlement). Every other key gets the
 * 404 of a missing id. docs/tasks.md, "The task".
 */
export interface Task {
  object: 'image.task' | 'video.task';
  /** `task_…`. */
  id: string;
  /** The public model id. */
  model: string;
  status: TaskStatus;
  /** The creation's original request record (`GET /v1/requests/{request_id}`). */
  request_id: string;
  /** ISO 8601. */
  created_at: string;
  /** ISO 8601; present once the task succeeded or failed. */
  finished_at?: string;
  quote: TaskQuote;
  billing: TaskBilling;
  /** Present only while settlement is possible (`billing.state` is `pending`). */
  settlement?: TaskSettlement;
  /** Present only once delivered (settled); never before, whatever the status. */
  outputs?: TaskOutput[];
  /** Present only for a `failed` task. */
  error?: TaskError;
  /** Present when an operator resolved the task. */
  resolution?: TaskResolution;
}

/** The confirmation word of image and video settlements (spec 4.3); the H3 word is refused. */
export const SETTLE_CONFIRMATION = 'settle_original_approved';

/**
 * The body of `POST /v1/images/{id}/settle` and `POST /v1/videos/{id}/settle` (spec 4.3):
 * exactly these three fields, `Content-Type: application/json`, at most 4096 bytes, no query
 * string. Anything else is refused and changes nothing.
 */
export interface SettleBody {
  /** `billing.actual_amount` of the task as read, micro-yuan; never the quoted amount. */
  actual_amount: MicroYuan;
  /** `billing.price_version` of the task as read. */
  price_version: string;
  confirmation: typeof SETTLE_CONFIRMATION;
}
