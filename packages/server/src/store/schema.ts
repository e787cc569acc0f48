import type { ColumnType, Generated } from 'kysely';
import type {
  HoldState,
  RequestStatus,
  TaskBillingState,
  TaskKind,
  TaskStatus,
} from '@tollgate/protocol';
import type {
  AuditEventTable,
  ConsoleInvitationTable,
  ConsoleSessionTable,
  ConsoleUserTable,
  PaymentEventTable,
  PaymentOrderTable,
  ShareEventTable,
  ShareTable,
} from './schema-people.js';

// The tables of shares, the console's people, the audit log and payments: schema-people.ts.
export type * from './schema-people.js';

/**
 * Table types. Conventions: ids are text made by the injected id generator (time-ordered);
 * times are epoch milliseconds; amounts are integer micro-yuan (bigint in PostgreSQL, parsed
 * back to numbers: every amount is a safe integer); JSON is stored as text; booleans do not
 * appear (states are enums in text columns).
 */
export interface Database {
  accounts: AccountTable;
  api_keys: ApiKeyTable;
  topups: TopupTable;
  redemption_codes: RedemptionCodeTable;
  redemption_batches: RedemptionBatchTable;
  holds: HoldTable;
  journal: JournalTable;
  model_prices: ModelPriceTable;
  requests: RequestTable;
  conversations: ConversationTable;
  response_turns: ResponseTurnTable;
  assets: AssetTable;
  asset_uses: AssetUseTable;
  asset_objects: AssetObjectTable;
  tasks: TaskTable;
  shares: ShareTable;
  share_events: ShareEventTable;
  console_users: ConsoleUserTable;
  console_invitations: ConsoleInvitationTable;
  console_sessions: ConsoleSessionTable;
  audit_events: AuditEventTable;
  payment_orders: PaymentOrderTable;
  payment_events: PaymentEventTable;
  disabled_channels: DisabledChannelTable;
  deployment_settings: DeploymentSettingTable;
  events: EventTable;
  projector_cursors: ProjectorCursorTable;
}

/**
 * One event of the accounted request path's log (migration 041-event-log; decision 0019). The
 * sequence is `Generated`: the store assigns it. `xid` (PostgreSQL only) is read as text.
 */
export interface EventTable {
  seq: Generated<number>;
  request_id: string;
  kind: string;
  account_id: string;
  key_id: string | null;
  idempotency_key: string | null;
  amount: number | null;
  released: number | null;
  /** JSON: what the event carries beyond its indexed and money columns. */
  payload: string | null;
  created_at: number;
}

/** How far a projector has applied the log (events/projector.ts); `xid` on PostgreSQL only. */
export interface ProjectorCursorTable {
  name: string;
  seq: number;
  xid: string | null;
}

/** A setting that is one value for the whole deployment (migrations/033-deployment-settings). */
export interface DeploymentSettingTable {
  name: string;
  value: string;
  updated_at: number;
}

/** A channel an operator disabled (docs/routing.md); enabling deletes the row. migrations/018. */
export interface DisabledChannelTable {
  channel_id: string;
  reason: string | null;
  disabled_at: number;
}

/** A stored object (content address) and whether it may still be used; migrations/005. */
export interface AssetObjectTable {
  sha256: string;
  /** `live`: usable; `reclaiming`: its bytes are being deleted, uploads of it wait. */
  state: 'live' | 'reclaiming';
  /** When an upload last claimed it: recent claims keep it from being reclaimed. */
  claimed_at: number;
}

/** An asset named by a business request; see migrations/004-asset-uses.ts. */
export interface AssetUseTable {
  asset_id: string;
  request_id: string;
  created_at: number;
}

export interface AssetTable {
  id: string;
  account_id: string;
  /** The key that uploaded it (assets belong to the account; this is for audit). */
  key_id: string;
  /** Content address of the bytes in asset storage. */
  sha256: string;
  media_type: string;
  bytes: number;
  width: number | null;
  height: number | null;
  /** Audio and video duration in milliseconds. */
  duration_ms: number | null;
  file_name: string | null;
  model: string | null;
  created_at: number;
  deleted_at: number | null;
  /** The task that produced it (outputs); null for uploads. */
  task_id: string | null;
  /** When it became readable: at upload, or when its task was settled; null until then. */
  delivered_at: number | null;
}

export interface ConversationTable {
  id: string;
  /** The key that opened the conversation; no other key may continue it. */
  key_id: string;
  /** The request of the turn in flight; one turn at a time. */
  pending_request_id: string | null;
  created_at: number;
  updated_at: number;
}

/** A stored Responses turn's input conversation (migration 038-response-turns). */
export interface ResponseTurnTable {
  /** The request id of the turn (`req_…`; its response is `resp_…`). */
  id: string;
  /** The key that made it; no other key may read or continue it. */
  key_id: string;
  /** JSON: the input items of the conversation up to and including this turn's. */
  items: string;
  /** JSON: what the response object repeats of its request (instructions, tools, …). */
  echo: string;
  created_at: number;
}

export interface AccountTable {
  id: string;
  email: string;
  balance: number;
  held: number;
  /**
   * Refunded micro-yuan not yet taken back (migrations/036-refund-owed.ts): taken from the next
   * money that becomes available, so while it is above 0 nothing is available (balance = held).
   */
  owed: number;
  created_at: number;
  /** Spend limit in micro-yuan, or null: no budget (migrations/019-budgets.ts). */
  budget_limit: number | null;
  budget_window: 'daily' | 'weekly' | 'monthly' | 'total' | null;
  /** Start of the window `budget_spent` counts; an older start than the current one means 0. */
  budget_window_start: number;
  budget_spent: number;
}

export type { KeyKind } from '@tollgate/protocol';
import type { KeyIdempotency, KeyKind } from '@tollgate/protocol';

export interface ApiKeyTable {
  id: string;
  account_id: string;
  kind: KeyKind;
  name: string | null;
  /** Hex SHA-256 of the whole key; the plaintext is never stored. */
  key_hash: string;
  /** The last four characters, so people can tell their keys apart. */
  key_hint: string;
  /** JSON array of model ids, or null for every model. */
  models: string | null;
  expires_at: number | null;
  disabled_at: number | null;
  last_used_at: number | null;
  created_at: number;
  /** The key that replaced this one by rotation. */
  replaced_by: string | null;
  /** Spend limit in micro-yuan, or null: no budget (migrations/019-budgets.ts). */
  budget_limit: number | null;
  budget_window: 'daily' | 'weekly' | 'monthly' | 'total' | null;
  /** Start of the window `budget_spent` counts; an older start than the current one means 0. */
  budget_window_start: number;
  budget_spent: number;
  /** Open holds reserved against this key's budget (holds.budget_key_id). */
  budget_held: number;
  /** JSON array of CIDR blocks the key may be used from, or null for everywhere. */
  allowed_ips: string | null;
  /** Whether business POSTs must send `Idempotency-Key` (migrations/037-key-idempotency.ts). */
  idempotency: KeyIdempotency;
}

export type { KeyIdempotency } from '@tollgate/protocol';

export interface TopupTable {
  id: string;
  account_id: string;
  /** Unique per account: the same reference twice is the same top-up. */
  reference: string;
  amount: number;
  /** `payment`: an online top-up (docs/payments.md). */
  source: 'admin' | 'redemption' | 'payment';
  created_at: number;
}

export interface RedemptionCodeTable {
  id: string;
  code_hash: string;
  amount: number;
  created_at: number;
  expires_at: number | null;
  redeemed_by: string | null;
  redeemed_at: number | null;
  /**
   * The creation call that made it (migrations/040); null only for a row written without one.
   * Optional on insert (null), as the column was added after the table.
   */
  batch_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** When an operator voided its batch while it was unredeemed: never redeemed after. */
  voided_at: ColumnType<number | null, number | null | undefined, number | null>;
}

/** One creation call of redemption codes (a batch of one for a single code); migrations/040. */
export interface RedemptionBatchTable {
  id: string;
  /** Each code's value, micro-yuan. */
  amount: number;
  count: number;
  expires_at: number | null;
  created_at: number;
  /** The first time an operator voided the batch's unredeemed codes; null: never voided. */
  voided_at: number | null;
}

export interface HoldTable {
  id: string;
  account_id: string;
  request_id: string;
  amount: number;
  state: HoldState;
  captured_amount: number | null;
  price_version: string;
  created_at: number;
  resolved_at: number | null;
  /** The key whose budget this hold reserved against (its `budget_held`), or null. */
  budget_key_id: string | null;
}

/**
 * `refund`: a payment provider's refund taken from the balance (negative balance delta), or the
 * part not available then added to `owed` (positive owed delta), or owed paid off later (both
 * negative).
 */
export type JournalKind = 'topup' | 'redemption' | 'hold' | 'capture' | 'release' | 'refund';

/** Append-only: rows are inserted, never updated or deleted. */
export interface JournalTable {
  id: string;
  account_id: string;
  kind: JournalKind;
  balance_delta: number;
  held_delta: number;
  /** Change of the account's `owed` (refunds only; 0 for every other kind). */
  owed_delta: number;
  hold_id: string | null;
  request_id: string | null;
  topup_id: string | null;
  reason: string;
  created_at: number;
}

export interface ModelPriceTable {
  model: string;
  version: number;
  /** What callers see and echo: `<model>@<version>`. */
  price_version: string;
  /** JSON of the model's price fields. */
  prices: string;
  source: 'config' | 'admin';
  created_at: number;
}

/** The wire unions are the stored ones: one definition, in packages/protocol. */
export type {
  HoldState,
  PaymentOrderState,
  RequestStatus,
  TaskBillingState,
  TaskKind,
  TaskStatus,
} from '@tollgate/protocol';

export interface RequestTable {
  id: string;
  key_id: string;
  account_id: string;
  idempotency_key: string;
  /** SHA-256 over method, route and canonical body. */
  fingerprint: string;
  method: string;
  path: string;
  model: string | null;
  status: RequestStatus;
  http_status: number | null;
  /** The verified response body (JSON text); kept but not shown while awaiting funds. */
  response_body: string | null;
  error_code: string | null;
  usage: string | null;
  hold_id: string | null;
  reserve_amount: number | null;
  /** The bill: what the usage costs at `price_version`, whether or not captured yet. */
  amount: number | null;
  price_version: string | null;
  pricing_rule: string | null;
  upstream_request_id: string | null;
  resolution: string | null;
  /** Streamed requests: JSON array of the SSE data payloads sent, replayed as they were. */
  transcript: string | null;
  /** Usage the upstream reported beyond the gateway's cap, and what was billed instead; null when credible. */
  usage_flag: string | null;
  /** When and why an operator reviewed a flagged usage. */
  usage_reviewed_at: number | null;
  usage_review: string | null;
  /** The task a creation (`accepted`) record created. */
  task_id: string | null;
  /** The channel that served (or last tried) the request; migrations/018. */
  channel: string | null;
  /** Every channel attempt, JSON (`ChannelAttempt[]`); null before the upstream was tried. */
  channel_attempts: string | null;
  /** What the serving channel charges the operator (its `cost` prices), micro-yuan; migrations/025. */
  channel_cost: number | null;
  /** The bill's line items, JSON (`BillLineItem[]`); null for a bill without any. migrations/039. */
  line_items: string | null;
  created_at: number;
  updated_at: number;
  expires_at: number;
}

/**
 * Whether the submission may have reached the upstream: `pending` (not a byte sent, safe to
 * send), `sending` (a submission may be on its way: never send again, only look it up),
 * `accepted` (the upstream gave its id).
 */
export type TaskSubmission = 'pending' | 'sending' | 'accepted';

export interface TaskTable {
  id: string;
  kind: TaskKind;
  account_id: string;
  key_id: string;
  /** The creation record (`accepted`). */
  request_id: string;
  model: string;
  upstream: string;
  /** The channel the task was submitted on; polls and downloads stay on it. migrations/018. */
  channel: string | null;
  status: TaskStatus;
  submission: TaskSubmission;
  /** The parsed creation input (JSON). */
  input: string;
  quoted_amount: number;
  price_version: string;
  /** The quote's line items (JSON). */
  line_items: string;
  hold_id: string;
  billing_state: TaskBillingState;
  actual_amount: number | null;
  actual_line_items: string | null;
  pricing_rule: string | null;
  settled_amount: number | null;
  upstream_task_id: string | null;
  /** JSON array of output descriptions (asset ids); shown only once delivered. */
  outputs: string | null;
  error_code: string | null;
  error_message: string | null;
  /** Operator resolution (JSON), for `submission_unknown` tasks. */
  resolution: string | null;
  lease_owner: string | null;
  /** When the lease runs out, in the database's own clock (ms since the epoch; docs/tasks.md "Claims"). */
  lease_until: number | null;
  /** The current lease's fencing token: a worker's writes match it (null: not leased). */
  claim_token: string | null;
  /**
   * When polls (a `running` task) or look-ups (a `submission_unknown` one never accepted) began
   * answering "no such job" (null: the last one found the job).
   */
  vanished_since: number | null;
  /** Times in a row the outputs of a finished task could not be stored (bounded, then an operator's). */
  download_failures: number;
  /**
   * While storing a finished task's outputs keeps failing: where they come from (the upstream's
   * URLs) and its delivery report (JSON, tasks/task-stored-json.ts), retried from there.
   */
  result_sources: string | null;
  /** H3: when a caller's `?refresh=true` last asked the upstream (refreshes are throttled per task). */
  refreshed_at: number | null;
  /** When a worker should next look at it; null: nothing to do (final, or waits for an operator). */
  due_at: number | null;
  attempts: number;
  submitted_at: number | null;
  finished_at: number | null;
  settled_at: number | null;
  /**
   * While billing is `pending`: when the settlement window closes (the task expires unless
   * settled before). Fixed when the task is priced, so a later change of the window never moves
   * a time already shown.
   */
  settlement_expires_at: number | null;
  created_at: number;
  updated_at: number;
}
