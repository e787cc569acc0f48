import type { AccountEmail, KeyNames, TaskNames } from '@tollgate/protocol';
import type { Kysely } from 'kysely';
import { keyHint } from '../../auth/key-view.js';
import type { Database } from '../../store/schema.js';

/**
 * The names people know, added to the console's own answers (docs/console.md, "Names, not ids"):
 * a key's name and hint beside its `key_id`, an account's email beside its `account_id`. Each is
 * one look-up by the ids of the rows at hand (a page of at most a few hundred), never a client
 * round trip per row. Only `/console/api` answers carry them; `/v1` answers stay the spec's.
 */

/** The name and hint of each key of `keyIds` that exists, by id. */
export async function keyNamesOf(
  db: Kysely<Database>,
  keyIds: readonly (string | null)[],
): Promise<Map<string, KeyNames>> {
  const ids = [...new Set(keyIds.filter((id): id is string => id !== null))];
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('api_keys')
    .select(['id', 'name', 'key_hint'])
    .where('id', 'in', ids)
    .execute();
  return new Map(
    rows.map((row) => [row.id, { key_name: row.name, key_hint: keyHint(row.key_hint) }]),
  );
}

/** `rows`, each with its key's `key_name` and `key_hint` (both `null` for no key). */
export async function withKeyNames<Row extends { readonly key_id: string | null }>(
  db: Kysely<Database>,
  rows: readonly Row[],
): Promise<(Row & KeyNames)[]> {
  const names = await keyNamesOf(
    db,
    rows.map((row) => row.key_id),
  );
  return rows.map((row) => ({
    ...row,
    ...((row.key_id === null ? undefined : names.get(row.key_id)) ?? {
      key_name: null,
      key_hint: null,
    }),
  }));
}

/** `rows`, each with its account's `account_email` (`null` for an account that is gone). */
export async function withAccountEmails<Row extends { readonly account_id: string }>(
  db: Kysely<Database>,
  rows: readonly Row[],
): Promise<(Row & AccountEmail)[]> {
  const ids = [...new Set(rows.map((row) => row.account_id))];
  const found =
    ids.length === 0
      ? []
      : await db.selectFrom('accounts').select(['id', 'email']).where('id', 'in', ids).execute();
  const emails = new Map(found.map((row) => [row.id, row.email]));
  return rows.map((row) => ({ ...row, account_email: emails.get(row.account_id) ?? null }));
}

/** `rows`, each with its task's kind and model (both `null` without a task). */
export async function withTaskNames<Row extends { readonly task_id: string | null }>(
  db: Kysely<Database>,
  rows: readonly Row[],
): Promise<(Row & TaskNames)[]> {
  const ids = [...new Set(rows.flatMap((row) => (row.task_id === null ? [] : [row.task_id])))];
  const found =
    ids.length === 0
      ? []
      : await db
          .selectFrom('tasks')
          .select(['id', 'kind', 'model'])
          .where('id', 'in', ids)
          .execute();
  const tasks = new Map(found.map((row) => [row.id, row]));
  return rows.map((row) => {
    const task = row.task_id === null ? undefined : tasks.get(row.task_id);
    return { ...row, task_kind: task?.kind ?? null, task_model: task?.model ?? null };
  });
}
