import type { PaymentOrderState } from '@tollgate/protocol';

/**
 * The tables of what people do around the accounted path (store/schema.ts has the conventions
 * and the `Database` that lists every table): public shares and their review, the console's
 * users, invitations and sessions, the audit log, and payments.
 */

/** Where a share is in its review; the moves between them are listed once in shares/share-states.ts. */
export type ShareState = 'pending_review' | 'approved' | 'rejected' | 'revoked';

/** Which secret derives a share's public token (shares/share-token.ts). */
export type ShareTokenSource = 'api_key' | 'console';

/** A public share of one delivered asset, behind review; migrations/010-shares.ts. */
export interface ShareTable {
  id: string;
  account_id: string;
  /** The key that asked for it: the only key that reads, lists and withdraws it. */
  key_id: string;
  /** The task named when it was asked for by `task_id`; null when asked for by `asset_id`. */
  task_id: string | null;
  /** The content it serves. */
  asset_id: string;
  state: ShareState;
  /** Hex SHA-256 of the public token; the token itself is never stored. */
  token_hash: string;
  /**
   * Which secret derives the token (migration 027): the plaintext API key that asked for it, or
   * the gateway's share-link secret for a share asked for from the console.
   */
  token_source: ShareTokenSource;
  created_at: number;
  /** When the latest decision (approve, reject, revoke) was made. */
  decided_at: number | null;
  /** The reason given with that decision (shown to the owner); the journal keeps every one. */
  decision_reason: string | null;
  updated_at: number;
}

/** Append-only journal of a share: every request and decision, with who and why. */
export interface ShareEventTable {
  id: string;
  share_id: string;
  /** 0 for the request, then one more per decision, in the order they happened. */
  sequence: number;
  at: number;
  /** `key:<id>` (the owner) or `operator` (admin API, CLI). */
  actor: string;
  action: 'requested' | 'approved' | 'rejected' | 'revoked';
  reason: string | null;
}

/** `member`: the account it belongs to; `operator`: the admin pages (docs/console.md). */
export type ConsoleRole = 'member' | 'operator';

export interface ConsoleUserTable {
  id: string;
  /** Lower-cased. */
  email: string;
  role: ConsoleRole;
  /** The member's account; `null` for operators. */
  account_id: string | null;
  /** argon2id PHC string; `null` until the invitation is accepted. */
  password_hash: string | null;
  created_at: number;
  password_changed_at: number | null;
  disabled_at: number | null;
  /** Base32 TOTP secret; set by setup, in force once `totp_enabled_at` is set (migrations/020). */
  totp_secret: string | null;
  totp_enabled_at: number | null;
  /** The last TOTP time step accepted: a code is accepted once. */
  totp_last_step: number | null;
}

export interface ConsoleInvitationTable {
  id: string;
  user_id: string;
  /** Hex SHA-256 of the token in the link; the token is never stored. */
  token_hash: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface ConsoleSessionTable {
  id: string;
  user_id: string;
  /** Hex SHA-256 of the cookie's token; the token is never stored. */
  token_hash: string;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
  revoked_at: number | null;
  /** The client address and User-Agent at sign-in, so a user can tell sessions apart. */
  address: string;
  user_agent: string;
  /** When this session proved the TOTP second factor (sign-in or setup); null if it did not. */
  totp_verified_at: number | null;
}

/**
 * Who acted: the shared admin token (admin API, no person), a signed-in console operator, the
 * payment provider's webhook, or `cli`: a `tollgate` command (`actor_id`: the OS user).
 */
export type AuditActorKind = 'admin_token' | 'console_user' | 'payment_provider' | 'cli';

/** One operator action or money movement; append-only (migrations/020-audit-log.ts). */
export interface AuditEventTable {
  id: string;
  created_at: number;
  actor_kind: AuditActorKind;
  /** The console user's id; `null` for the admin token. */
  actor_id: string | null;
  actor_email: string | null;
  /** The client address the action came from. */
  address: string | null;
  /** What was done, `domain.verb` (docs/audit.md lists them). */
  action: string;
  /** The object acted on (account, key, request, task, share, code, model, user). */
  target_id: string | null;
  /** The account whose money or keys it concerns, when there is one. */
  account_id: string | null;
  /** Micro-yuan moved (positive), when the action moved money. */
  amount: number | null;
  reason: string | null;
  /** JSON object with the action's other inputs (never a secret). */
  detail: string | null;
}

/** One checkout a member started (migrations/026-payment-orders.ts). */
export interface PaymentOrderTable {
  id: string;
  account_id: string;
  provider: string;
  /** Micro-yuan, a whole number of fen (the provider charges fen). */
  amount: number;
  /** ISO 4217, lower case as the provider writes it: `cny`. */
  currency: string;
  state: PaymentOrderState;
  provider_session_id: string | null;
  /** The provider's payment (Stripe: the PaymentIntent), known once paid; refunds name it. */
  provider_payment_id: string | null;
  checkout_url: string | null;
  /** Micro-yuan the provider refunded so far (its running total). */
  refunded_amount: number;
  /**
   * Refunded micro-yuan that could not be taken back when each refund arrived (it was spent or
   * held): added to the account's `owed`, which is paid off from the next money available.
   */
  refund_owed: number;
  /** Why an operator should look (an amount mismatch, a refund owed); null when nothing is wrong. */
  flag: string | null;
  created_at: number;
  updated_at: number;
}

/** A provider event seen once (unique per provider and id), with what it did. */
export interface PaymentEventTable {
  provider: string;
  event_id: string;
  type: string;
  order_id: string | null;
  outcome: string;
  received_at: number;
}
