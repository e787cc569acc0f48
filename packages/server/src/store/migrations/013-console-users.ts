import type { Kysely } from 'kysely';

/**
 * The web console's sign-in (docs/console.md), apart from API keys (spec 5.4). A console user
 * is a `member` of one account or an `operator`; `password_hash` is an argon2id PHC string, and
 * `null` until the invitation is accepted. Invitations and sessions keep only the SHA-256 of
 * their tokens: the tokens themselves live in the invitation link and the session cookie.
 * `requests_account_created` serves the owner's list of every record of the account's keys.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('console_users')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('email', 'text', (column) => column.notNull().unique())
    .addColumn('role', 'text', (column) => column.notNull())
    .addColumn('account_id', 'text', (column) => column.references('accounts.id'))
    .addColumn('password_hash', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('password_changed_at', 'bigint')
    .addColumn('disabled_at', 'bigint')
    .execute();
  await db.schema
    .createTable('console_invitations')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('console_users.id'))
    .addColumn('token_hash', 'text', (column) => column.notNull().unique())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema
    .createTable('console_sessions')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('console_users.id'))
    .addColumn('token_hash', 'text', (column) => column.notNull().unique())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('last_seen_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .addColumn('revoked_at', 'bigint')
    .addColumn('address', 'text', (column) => column.notNull())
    .addColumn('user_agent', 'text', (column) => column.notNull())
    .execute();
  await db.schema
    .createIndex('console_sessions_user')
    .on('console_sessions')
    .columns(['user_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('requests_account_created')
    .on('requests')
    .columns(['account_id', 'created_at', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('requests_account_created').execute();
  await db.schema.dropTable('console_sessions').execute();
  await db.schema.dropTable('console_invitations').execute();
  await db.schema.dropTable('console_users').execute();
}
