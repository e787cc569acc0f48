/*
 * The audit log (docs/audit.md): one row per operator action and per money movement of the
 * payment provider, append-only. Read by `GET /admin/v1/audit` and the console's
 * `GET /console/api/admin/audit`. Times are ISO 8601 strings.
 */

import type { MicroYuan } from './money.js';

/**
 * Who acted: `admin_token` (a shared token names no person: `id` and `email` are `null`),
 * `console_user`, `payment_provider` (`id`: `stripe`), or `cli` (`id`: the OS user who ran it).
 */
export type AuditActorKind = 'admin_token' | 'console_user' | 'payment_provider' | 'cli';

export interface AuditActor {
  kind: AuditActorKind;
  /** `cu_…` for a console user; `null` when the actor names none. */
  id: string | null;
  email: string | null;
  /** The client address it acted from; `null` when none (the CLI, a provider's webhook). */
  address: string | null;
}

/** One row of the audit log. */
export interface AuditEvent {
  object: 'audit_event';
  /** `aud_…`. */
  id: string;
  created_at: string;
  actor: AuditActor;
  /** What was done, `<subject>.<verb>` (`account.top_up`, `console_user.disable`, …). */
  action: string;
  /** The id acted on (an account, a key, a channel, a user, …); `null` when none. */
  target_id: string | null;
  /** The account concerned; `null` when none. */
  account_id: string | null;
  /** Micro-yuan moved, for a money action; else `null`. */
  amount: MicroYuan | null;
  /** The reason or reference given; `null` when none. */
  reason: string | null;
  /** More of the action, as it recorded it; `null` when nothing more. */
  detail: Record<string, unknown> | null;
}

/** `GET /console/api/admin/audit?account_id&action&limit&after`: newest first, a page at a time. */
export interface AuditEventPage {
  object: 'list';
  data: AuditEvent[];
  has_more: boolean;
  /** The last row's id, to pass as `after` for the next page; `null` on the last page. */
  next_cursor: string | null;
}

/** One broken ledger invariant (docs/billing.md, "Invariants"). */
export interface LedgerViolation {
  /** The invariant's name (`journal_replay`, `owed_paid_first`, `integer_amounts`, …). */
  invariant: string;
  /** What broke it: an account, a hold, a request or a task id. */
  subject: string;
  detail: string;
}

/**
 * `GET /console/api/admin/ledger/check` (and `GET /admin/v1/ledger/check`, `tollgate ledger
 * check`): every ledger invariant checked over one read snapshot.
 */
export interface LedgerReport {
  /** True when no invariant is broken (`violations` empty). */
  ok: boolean;
  /** How many accounts, holds and hold journal entries were read. */
  accounts: number;
  holds: number;
  hold_journal_entries: number;
  violations: LedgerViolation[];
}
