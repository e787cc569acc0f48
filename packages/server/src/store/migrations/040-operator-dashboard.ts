import { sql, type Kysely } from 'kysely';

/**
 * The operator's dashboard, request log and code batches (docs/console.md, "Dashboard", "Request
 * log", "Redemption codes"):
 *
 * - `redemption_batches`: one row per creation call (a batch of one for a single code), newest
 *   first by (`created_at`, `id`); each code names its batch (`redemption_codes.batch_id`,
 *   indexed: a batch's counts read only its own codes) and carries `voided_at` once an operator
 *   voided its batch (a voided code is never redeemed). Codes made before this migration are
 *   grouped by what one creation call gave them all: the same `created_at`, `amount` and
 *   `expires_at` (one `now` per call, account-service.ts).
 * - `requests_created` (`created_at`, `id`): the global request log, newest first by keyset,
 *   without an account or key filter (those use `requests_account_created` and
 *   `requests_key_created`). Written once per record (the columns never change).
 * - `journal_captures_created` (`created_at`), partial on `kind = 'capture'`: the dashboard's
 *   captures of a period across every account (a period of one account reads
 *   `journal_account_created`). Only capture entries are in it: one insert per charged request,
 *   at the index's right edge (times grow); holds, releases and credits are not written into it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('redemption_batches')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('amount', 'bigint', (column) => column.notNull())
    .addColumn('count', 'integer', (column) => column.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('voided_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('redemption_batches_created')
    .on('redemption_batches')
    .columns(['created_at', 'id'])
    .execute();
  await db.schema.alterTable('redemption_codes').addColumn('batch_id', 'text').execute();
  await db.schema.alterTable('redemption_codes').addColumn('voided_at', 'bigint').execute();
  await db.schema
    .createIndex('redemption_codes_batch')
    .on('redemption_codes')
    .column('batch_id')
    .execute();

  const base = db as unknown as Kysely<BatchTables>;
  const groups = await base
    .selectFrom('redemption_codes')
    .select(['created_at', 'amount', 'expires_at', sql<string>`cast(count(*) as text)`.as('count')])
    .groupBy(['created_at', 'amount', 'expires_at'])
    .orderBy('created_at')
    .orderBy('amount')
    .execute();
  for (const [index, group] of groups.entries()) {
    const createdAt = Number(group.created_at);
    // Sortable like a generated id of that time; `m` and the group's place keep it unique.
    const id = `rdb_${createdAt.toString(36).padStart(9, '0')}m${String(index).padStart(6, '0')}`;
    await base
      .insertInto('redemption_batches')
      .values({
        id,
        amount: group.amount,
        count: Number(group.count),
        expires_at: group.expires_at,
        created_at: group.created_at,
        voided_at: null,
      })
      .execute();
    await base
      .updateTable('redemption_codes')
      .set({ batch_id: id })
      .where('created_at', '=', group.created_at)
      .where('amount', '=', group.amount)
      .where((eb) =>
        group.expires_at === null
          ? eb('expires_at', 'is', null)
          : eb('expires_at', '=', group.expires_at),
      )
      .execute();
  }

  await db.schema
    .createIndex('requests_created')
    .ifNotExists()
    .on('requests')
    .columns(['created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('journal_captures_created')
    .ifNotExists()
    .on('journal')
    .column('created_at')
    .where(sql.ref('kind'), '=', sql.lit('capture'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('journal_captures_created').execute();
  await db.schema.dropIndex('requests_created').execute();
  await db.schema.dropIndex('redemption_codes_batch').execute();
  await db.schema.alterTable('redemption_codes').dropColumn('voided_at').execute();
  await db.schema.alterTable('redemption_codes').dropColumn('batch_id').execute();
  await db.schema.dropTable('redemption_batches').execute();
}

/** The columns this migration reads and writes, as they are at 040. */
interface BatchTables {
  redemption_codes: {
    id: string;
    amount: number;
    created_at: number;
    expires_at: number | null;
    batch_id: string | null;
  };
  redemption_batches: {
    id: string;
    amount: number;
    count: number;
    expires_at: number | null;
    created_at: number;
    voided_at: number | null;
  };
}
