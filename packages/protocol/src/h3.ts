import type { Currency, MicroYuan } from './money.js';
import type { LineItem } from './quotes.js';
import type { TaskBilling, TaskError, TaskQuote, TaskResolution, TaskSettlement } from './tasks.js';

/** The H3 actions (spec 4.4): `generate` and `regenerate` make a video, `understand` answers text. */
export type H3Action = 'generate' | 'regenerate' | 'understand';

/**
 * What a reference asset is to the task: images as `first_frame`, `last_frame` or
 * `reference_image`; a video as `reference_video`; audio as `reference_audio`.
 */
export type H3Role =
  'first_frame' | 'last_frame' | 'reference_image' | 'reference_video' | 'reference_audio';

/**
 * Where an H3 task is. As image and video tasks (docs/tasks.md, "States"), except that a failed
 * task reads `FAILED`, the spec's spelling (spec 2.6, 3): its billing state, not its status, says
 * whether it costs anything.
 */
export type H3TaskStatus = 'queued' | 'running' | 'succeeded' | 'FAILED' | 'submission_unknown';

/**
 * The answer of `POST /v1/h3/tasks` with `"operation":"quote"` (200; read-only: nothing is
 * recorded, held or created). Submit echoes `input_digest`, `price_version` and `quoted_amount`
 * as `expected_input_digest`, `expected_price_version` and `expected_quote_amount`.
 */
export interface H3Quote {
  object: 'h3.quote';
  model: string;
  action: H3Action;
  /** `sha256:<hex>` of the canonical input: key order and white space do not change it. */
  input_digest: string;
  /** `<model>@<version>` of the prices used. */
  price_version: string;
  /** What submit would hold, micro-yuan; `null` when `closed_reasons` is not empty. */
  quoted_amount: MicroYuan | null;
  currency: Currency;
  /** How `quoted_amount` adds up; on a closed quote, for information only. */
  line_items: LineItem[];
  /** Why this combination cannot be submitted, one sentence each; empty when it can. */
  closed_reasons: string[];
}

/**
 * An H3 task as its creating key reads it (`GET /v1/h3/tasks/{id}`; the 202 of submit; the 200
 * of settlement). Every other key gets the 404 of a missing id. docs/h3.md, "The task".
 */
export interface H3Task {
  object: 'h3.task';
  /** A UUID. */
  id: string;
  model: string;
  action: H3Action;
  status: H3TaskStatus;
  /** The submit's original request record (`GET /v1/requests/{request_id}`). */
  request_id: string;
  /** The digest the task was submitted with. */
  input_digest: string;
  /** `regenerate`, or `understand` of a task's video: the task whose video was the input. */
  source_task_id?: string;
  created_at: string;
  finished_at?: string;
  quote: TaskQuote;
  billing: TaskBilling;
  /** Present only while settlement is possible: `POST /v1/h3/tasks/{id}/settle`. */
  settlement?: TaskSettlement;
  /** Video actions, once delivered (settled): the video, an asset of the creating account. */
  asset_id?: string;
  /** Video actions, once delivered: the private download path (creating key; Range supported). */
  content_path?: string;
  /** Seconds of the delivered video, once delivered. */
  seconds?: number;
  /** `understand`, once delivered (settled): the answer. */
  text?: string;
  /** Present only for a `FAILED` task. */
  error?: TaskError;
  resolution?: TaskResolution;
}

/** The confirmation word of H3 settlements (spec 4.5); the image and video word is refused. */
export const H3_SETTLE_CONFIRMATION = 'settle_original_h3';

/** The body of `POST /v1/h3/tasks/{id}/settle` (spec 4.5): exactly these three fields. */
export interface H3SettleBody {
  actual_amount: MicroYuan;
  price_version: string;
  confirmation: typeof H3_SETTLE_CONFIRMATION;
}
