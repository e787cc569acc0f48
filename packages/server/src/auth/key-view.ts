/**
 * A key as it is shown (the admin API, the console, statements) and its stored JSON columns as
 * they are read (the views, and authentication when a key enters its cache).
 */
import type { ApiKey } from '@tollgate/protocol';
import { z } from 'zod';
import { budgetStateOf, budgetView } from '../budgets/budget-ledger.js';
import type { ApiKeyTable } from '../store/schema.js';
import { parseStoredJson } from '../store/stored-json.js';

/** A key as the admin API and the console show it: the wire type (packages/protocol). */
export type KeyView = ApiKey;

const iso = (time: number | null) => (time === null ? null : new Date(time).toISOString());

/** How a key is told apart where its plaintext is not shown: `tgk_…` and its last four characters. */
export function keyHint(lastFour: string): string {
  return `tgk_…${lastFour}`;
}

/**
 * `api_keys.models`: the model ids the key may call, each a configured model when it was
 * created (key-service.ts `KeyService.create`); the column is null for every model.
 */
const modelsSchema = z.array(z.string());

/**
 * `api_keys.allowed_ips`: the canonical CIDR blocks the key may be used from, at least one
 * (key-inputs.ts `allowedIpsInput`); the column is null for everywhere.
 */
const allowedIpsSchema = z.array(z.string()).min(1);

/**
 * A key's stored list column (`models` or `allowed_ips`), checked with its schema; null when the
 * column is null (no limit). A value that fails its schema is a `CorruptRow`.
 */
function storedListOf<Column extends 'models' | 'allowed_ips'>(
  row: Pick<ApiKeyTable, 'id' | Column>,
  column: Column,
  schema: z.ZodType<string[]>,
): string[] | null {
  const text = row[column];
  return text === null
    ? null
    : parseStoredJson(schema, text, { table: 'api_keys', column, id: row.id });
}

/**
 * A key's stored model allowlist, null for every model: read by the key's views, by
 * authentication (once, when the key enters the cache) and by the console's settles on behalf
 * of the key (http/console/owner-identity.ts).
 */
export const keyModelsOf = (row: Pick<ApiKeyTable, 'id' | 'models'>): string[] | null =>
  storedListOf(row, 'models', modelsSchema);

/** A key's stored address allowlist, null for everywhere. */
export const allowedIpsOf = (row: Pick<ApiKeyTable, 'id' | 'allowed_ips'>): string[] | null =>
  storedListOf(row, 'allowed_ips', allowedIpsSchema);

export function keyView(row: ApiKeyTable, now: number, budgetTimeZone: string): KeyView {
  return {
    object: 'api_key',
    id: row.id,
    account_id: row.account_id,
    kind: row.kind,
    name: row.name,
    hint: keyHint(row.key_hint),
    models: keyModelsOf(row),
    expires_at: iso(row.expires_at),
    disabled_at: iso(row.disabled_at),
    last_used_at: iso(row.last_used_at),
    created_at: iso(row.created_at) ?? '',
    replaced_by: row.replaced_by,
    budget: budgetView(budgetStateOf(row, row.budget_held, now, budgetTimeZone)),
    allowed_ips: allowedIpsOf(row),
    idempotency: row.idempotency,
  };
}
