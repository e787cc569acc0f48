import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * PostgreSQL only: `tollgate_refuse(reason)` raises an error with SQLSTATE `TG001` and the
 * reason as its message. A money movement written as ONE statement (requests/one-statement-money.ts)
 * calls it when a guard refused (an account that cannot cover a batch, a hold no longer open), so
 * that the error rolls the whole statement back, every insert of it included, exactly as a
 * refused transaction is rolled back; the caller then takes the path that decides claim by claim.
 * It holds no rule of its own: every guard stays in the statement that calls it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`create or replace function tollgate_refuse(reason text) returns bigint
    language plpgsql as $$
    begin
      raise exception using errcode = 'TG001', message = reason;
    end
    $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`drop function if exists tollgate_refuse(text)`.execute(db);
}
