import { sql, type Kysely } from 'kysely';

/** The first schema. Amount columns are bigint so PostgreSQL never overflows 2^31 micro-yuan. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('email', 'text', (column) => column.notNull().unique())
    .addColumn('balance', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('held', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addCheckConstraint(
      'accounts_money_non_negative',
      sql`balance >= 0 and held >= 0 and balance - held >= 0`,
    )
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('name', 'text')
    .addColumn('key_hash', 'text', (column) => column.notNull().unique())
    .addColumn('key_hint', 'text', (column) => column.notNull())
    .addColumn('models', 'text')
    .addColumn('expires_at', 'bigint')
    .addColumn('disabled_at', 'bigint')
    .addColumn('last_used_at', 'bigint')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('api_keys_account').on('api_keys').column('account_id').execute();

  await db.schema
    .createTable('topups')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
    .addColumn('reference', 'text', (column) => column.notNull())
    .addColumn('amount', 'bigint', (column) => column.notNull())
    .addColumn('source', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addUniqueConstraint('topups_account_reference', ['account_id', 'reference'])
    .addCheckConstraint('topups_amount_positive', sql`amount > 0`)
    .execute();

  await db.schema
    .createTable('redemption_codes')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('code_hash', 'text', (column) => column.notNull().unique())
    .addColumn('amount', 'bigint', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('redeemed_by', 'text', (column) => column.references('accounts.id'))
    .addColumn('redeemed_at', 'bigint')
    .execute();

  await db.schema
    .createTable('holds')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
    .addColumn('request_id', 'text', (column) => column.notNull())
    .addColumn('amount', 'bigint', (column) => column.notNull())
    .addColumn('state', 'text', (column) => column.notNull())
    .addColumn('captured_amount', 'bigint')
    .addColumn('price_version', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('resolved_at', 'bigint')
    .addCheckConstraint('holds_amount_non_negative', sql`amount >= 0`)
    .execute();
  await db.schema
    .createIndex('holds_account_state')
    .on('holds')
    .columns(['account_id', 'state'])
    .execute();
  // One hold per request: a request can never reserve (or be captured) twice.
  await db.schema.createIndex('holds_request').on('holds').column('request_id').unique().execute();

  await db.schema
    .createTable('journal')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('balance_delta', 'bigint', (column) => column.notNull())
    .addColumn('held_delta', 'bigint', (column) => column.notNull())
    .addColumn('hold_id', 'text')
    .addColumn('request_id', 'text')
    .addColumn('topup_id', 'text')
    .addColumn('reason', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('journal_account').on('journal').column('account_id').execute();
  await db.schema.createIndex('journal_hold').on('journal').column('hold_id').execute();

  await db.schema
    .createTable('model_prices')
    .addColumn('model', 'text', (column) => column.notNull())
    .addColumn('version', 'integer', (column) => column.notNull())
    .addColumn('price_version', 'text', (column) => column.notNull().unique())
    .addColumn('prices', 'text', (column) => column.notNull())
    .addColumn('source', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('model_prices_pk', ['model', 'version'])
    .execute();

  await db.schema
    .createTable('requests')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('key_id', 'text', (column) => column.notNull())
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('idempotency_key', 'text', (column) => column.notNull())
    .addColumn('fingerprint', 'text', (column) => column.notNull())
    .addColumn('method', 'text', (column) => column.notNull())
    .addColumn('path', 'text', (column) => column.notNull())
    .addColumn('model', 'text')
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('http_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('error_code', 'text')
    .addColumn('usage', 'text')
    .addColumn('hold_id', 'text')
    .addColumn('reserve_amount', 'bigint')
    .addColumn('amount', 'bigint')
    .addColumn('price_version', 'text')
    .addColumn('pricing_rule', 'text')
    .addColumn('upstream_request_id', 'text')
    .addColumn('resolution', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .addUniqueConstraint('requests_key_idempotency', ['key_id', 'idempotency_key'])
    .execute();
  await db.schema.createIndex('requests_status').on('requests').column('status').execute();
  await db.schema.createIndex('requests_expires').on('requests').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'requests',
    'model_prices',
    'journal',
    'holds',
    'redemption_codes',
    'topups',
    'api_keys',
    'accounts',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
