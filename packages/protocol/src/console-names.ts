/*
 * The names people know, which the console's answers add beside the ids they carry (docs/console.md,
 * "Names, not ids"): a key's name and hint beside `key_id`, an account's email beside
 * `account_id`, a task's kind and model beside `task_id`. Only `/console/api` answers carry
 * them; `/v1` and `/admin/v1` answers stay as they are.
 */

import type { TaskKind } from './tasks.js';

/** A key as a person knows it, beside its `key_id`. */
export interface KeyNames {
  /** The key's name; `null` when it has none, or when `key_id` names no key. */
  key_name: string | null;
  /**
   * `tgk_…` and the key's last four characters; `null` when `key_id` names no key (an upload or
   * a share asked for from the console: `console:<user id>`).
   */
  key_hint: string | null;
}

/** An account as a person knows it, beside its `account_id`. */
export interface AccountEmail {
  /** `null` only for an account that is gone. */
  account_email: string | null;
}

/** What a task is, beside a `task_id`. */
export interface TaskNames {
  /** Both `null` when there is no task (`task_id` is `null`) or it is gone. */
  task_kind: TaskKind | null;
  task_model: string | null;
}
