import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Cache change notices (docs/operations.md, "Several instances"): on PostgreSQL, every change
 * that a cached key or price must not outlive sends a `NOTIFY` on the channel `tollgate_cache`
 * when its transaction commits, whoever made it (an instance, the CLI, a script): a key created
 * or its disable, expiry, rotation, model allowlist, IP allowlist or budget changed; a new price version. Each instance
 * listens (store/change-feed.ts) and forgets the entry named. The payload is JSON
 * `{"schema", "table", "key"}` (the key's hash or the model id): one channel for every schema,
 * since a channel name is limited to 63 bytes and a schema name may be as long. A `last_used_at`
 * write touches none of the columns named, so it sends nothing. SQLite: one process, nothing
 * to tell.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`
    create or replace function tollgate_notify_cache_change() returns trigger
    language plpgsql as $$
    begin
      perform pg_notify('tollgate_cache', json_build_object(
        'schema', TG_TABLE_SCHEMA,
        'table', TG_TABLE_NAME,
        'key', to_jsonb(NEW) ->> TG_ARGV[0])::text);
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger api_keys_cache_change
    after insert or update of disabled_at, expires_at, replaced_by, models, key_hash, allowed_ips,
      budget_limit, budget_window
    on api_keys for each row execute procedure tollgate_notify_cache_change('key_hash')`.execute(
    db,
  );
  await sql`
    create trigger model_prices_cache_change
    after insert or update on model_prices
    for each row execute procedure tollgate_notify_cache_change('model')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`drop trigger if exists model_prices_cache_change on model_prices`.execute(db);
  await sql`drop trigger if exists api_keys_cache_change on api_keys`.execute(db);
  await sql`drop function if exists tollgate_notify_cache_change()`.execute(db);
}
