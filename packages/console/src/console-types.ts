/*
 * The console API's answers that have no type in `@tollgate/protocol` (packages/console/README.md,
 * "Types"): answers of `/console/api` only, whose types the server declares in its own sources.
 * Each names its route and the server's declaration it follows; the fields are those the server
 * sends (a console page may read fewer). Everything the protocol has (accounts, budgets, assets,
 * shares, tasks, request records, usage, statements, models, operator views) is imported from
 * it, never redeclared here.
 */

import type {
  H3Task,
  KeyIdempotency,
  RequestList,
  RequestSummary,
  Share,
  Task,
} from '@tollgate/protocol';

/** A list answer without paging (`{"object": "list", "data": [...]}`). */
export interface List<Item> {
  object: 'list';
  data: Item[];
}

/** One page of a newest-first listing (server: util/list-page.ts `ListPage`). */
export interface ListPage<Item> extends List<Item> {
  has_more: boolean;
  /** The last item's id, to pass as `after` (or `cursor`) for the next page; null on the last. */
  next_cursor: string | null;
}

/** A console user (server: console/console-users.ts `ConsoleUserView`). */
export interface ConsoleUser {
  object: 'console_user';
  id: string;
  email: string;
  role: 'member' | 'operator';
  account_id: string | null;
  /** Whether sign-in asks for a TOTP code. */
  totp_enabled: boolean;
  disabled_at: string | null;
  created_at: string;
}

/**
 * `GET /console/api/session`, and the answer of a sign-in and a sign-up: who, and the CSRF token
 * to send back (server: console/session-routes.ts `SessionAnswer`).
 */
export interface SessionState {
  object: 'console_session_state';
  user: ConsoleUser;
  csrf_token: string;
  session_id: string;
  expires_at: string;
}

/** `GET /console/api/invitations/{token}` (server: console/session-routes.ts). */
export interface InvitationState {
  object: 'console_invitation_state';
  email: string;
  expires_at: string;
}

/** `POST /console/api/admin/invitations` (server: console/console-users.ts `Invitation`). */
export interface Invitation {
  object: 'console_invitation';
  user: ConsoleUser;
  /** `/console/invite/<token>`, relative to the gateway; shown once. */
  invite_url: string;
  expires_at: string;
}

/** `GET /console/api/config` (server: console/session-routes.ts). */
export interface ConsoleConfig {
  object: 'console_config';
  self_signup: boolean;
}

/** One of `GET /console/api/sessions` (server: console/console-sessions.ts `SessionView`). */
export interface ConsoleSession {
  object: 'console_session';
  id: string;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  address: string;
  user_agent: string;
  /** The session this list was asked from. */
  current: boolean;
}

/** `POST /console/api/totp`: a new secret, shown once (server: console/session-routes.ts). */
export interface TotpSetup {
  object: 'console_totp_setup';
  secret: string;
  otpauth_url: string;
}

/** An API key and a created one (`/console/api/keys`, …): the wire types (packages/protocol). */
export type { ApiKey, NewApiKey } from '@tollgate/protocol';

/** What the key create form sends beside the name: `models` (`null`: every model), expiry. */
export interface KeyOptions {
  models: string[] | null;
  expires_at: string | null;
  idempotency: KeyIdempotency;
}

/**
 * A key as the console's answers name it beside its `key_id` (server: console/console-names.ts
 * `KeyNames`): its name and hint, both `null` when the id names no key (`console:<user id>`).
 */
export interface KeyNames {
  key_name: string | null;
  key_hint: string | null;
}

/** An account as the console's operator answers name it beside its `account_id`. */
export interface AccountEmail {
  account_email: string | null;
}

/**
 * One record of `GET /console/api/requests`: the protocol's `RequestSummary`, the key that made
 * it and its name (server: usage/request-listing.ts `ownerSummaryView`, console-names.ts).
 */
export type OwnerRequestSummary = RequestSummary & { key_id: string } & KeyNames;

/** `GET /console/api/requests` (server: usage/request-listing.ts `OwnerRequestList`). */
export type OwnerRequestList = Omit<RequestList, 'data'> & { data: OwnerRequestSummary[] };

/**
 * A task of the account as `/console/api/tasks` shows it: the creating key's view (the
 * protocol's `Task` or `H3Task`) and that key (server: console/account-tasks.ts `ownerTaskView`).
 */
export type OwnerTask = (Task | H3Task) & { key_id: string } & KeyNames;

/** `GET /console/api/usage/keys`: spend per key over UTC days (server: usage/account-usage.ts). */
export interface KeySpend {
  object: 'list';
  account_id: string;
  from: string;
  to: string;
  data: ({ key_id: string | null; requests: number; amount: number } & KeyNames)[];
}

/**
 * A share of the account (`/console/api/shares`): the protocol's `Share` and who asked for it
 * (server: shares/share-service.ts `accountView`).
 */
export type ConsoleShare = Share &
  KeyNames & {
    /** `api_key`: asked for by a key, whose link only that key reads; `console`: asked here. */
    token_source: 'api_key' | 'console';
    key_id: string;
    media_type: string;
    bytes: number;
  };

/** An online top-up order (server: payments/payment-orders.ts `PaymentOrderView`). */
export interface PaymentOrder {
  object: 'payment_order';
  id: string;
  account_id: string;
  provider: string;
  /** Micro-yuan. */
  amount: number;
  currency: string;
  state:
    | 'created'
    | 'paid'
    | 'expired'
    | 'failed'
    | 'amount_mismatch'
    | 'balance_limit'
    | 'refunded_partially'
    | 'refunded';
  /** Present while the order can still be paid. */
  checkout_url: string | null;
  refunded_amount: number;
  refund_owed: number;
  flag: string | null;
  created_at: string;
  updated_at: string;
}

/** Whether online top-up is set up (server: payments/payment-service.ts `status`). */
export interface PaymentStatus {
  object: 'payment_status';
  enabled: boolean;
  provider: string | null;
  currency: string | null;
}

/** `GET /console/api/topups`: the account's orders and whether payment is set up. */
export type TopUpList = List<PaymentOrder> & { payments: PaymentStatus };

/** `POST /console/api/topups`: the order and where the browser pays it. */
export interface StartedTopUp {
  order: PaymentOrder;
  checkout_url: string;
}

/** One of `GET /console/api/admin/audit` (server: audit/audit-log.ts `AuditEventView`). */
export interface AuditEvent {
  object: 'audit_event';
  id: string;
  created_at: string;
  actor: {
    kind: 'admin_token' | 'console_user' | 'payment_provider' | 'cli';
    id: string | null;
    email: string | null;
    address: string | null;
  };
  action: string;
  target_id: string | null;
  account_id: string | null;
  amount: number | null;
  reason: string | null;
  detail: Record<string, unknown> | null;
}

/** A channel and its state in the answering instance (server: routing/channel-router.ts `ChannelStatus`). */
export interface Channel {
  id: string;
  model: string;
  upstream: string;
  upstream_model: string;
  weight: number;
  priority: number;
  disabled: boolean;
  breaker: 'closed' | 'open' | 'half_open';
  consecutive_failures: number;
  cooldown_ends_at: string | null;
  in_flight: number;
  max_concurrency: number | null;
  requests_per_minute: number | null;
}

/** One price version of a model (server: billing/price-view.ts `ModelPricesView`). */
export interface ModelPrices {
  object: 'model_prices';
  model: string;
  price_version: string;
  /** The configuration's price fields (config/schema.ts), micro-yuan. */
  prices: Record<string, unknown>;
  created_at: string;
}

/** One of `GET /console/api/admin/models` (server: console/operator-routes.ts). */
export interface OperatorModel {
  id: string;
  upstream: string;
  families: string[];
  current: ModelPrices;
}

/** `GET /console/api/admin/ledger/check` (server: billing/ledger-check.ts `LedgerReport`). */
export interface LedgerReport {
  ok: boolean;
  accounts: number;
  holds: number;
  hold_journal_entries: number;
  violations: { invariant: string; subject: string; detail: string }[];
}

/** One side of the unresolved queue (server: requests/unresolved-queue.ts `UnresolvedTotals`). */
export interface UnresolvedTotals {
  count: number;
  /** Micro-yuan held by their open holds. */
  held: number;
  oldest_created_at: string | null;
  oldest_age_seconds: number | null;
}

/** `GET /console/api/admin/unresolved` (server: requests/unresolved-queue.ts `UnresolvedSummary`). */
export interface UnresolvedSummary {
  requests: UnresolvedTotals;
  tasks: UnresolvedTotals;
  total: UnresolvedTotals;
}
