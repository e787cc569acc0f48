import { MAX_MOVEMENT_MICRO_YUAN } from '@tollgate/protocol';
import { sql, type Kysely } from 'kysely';

/**
 * Online top-up (docs/payments.md): `payment_orders`, one row per checkout a member started,
 * and `payment_events`, every provider event id seen (unique per provider), so that an event
 * credits at most once whatever the provider redelivers. The order's state moves once per
 * transition, guarded in SQL (payments/payment-orders.ts); `flag` says why an operator should
 * look at it (an amount mismatch, a refund larger than what was available).
 *
 * The amount bound is the same as every top-up's (1 to MAX_MOVEMENT_MICRO_YUAN), enforced by
 * the service first and here as the backstop: a CHECK, which both dialects accept on a table
 * created with it (007-money-bounds.ts needed triggers only for tables that already existed).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const maxMovement = sql.lit(MAX_MOVEMENT_MICRO_YUAN);
  await db.schema
    .createTable('payment_orders')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
    .addColumn('provider', 'text', (column) => column.notNull())
    .addColumn('amount', 'bigint', (column) =>
      column.notNull().check(sql`amount > 0 and amount <= ${maxMovement}`),
    )
    .addColumn('currency', 'text', (column) => column.notNull())
    .addColumn('state', 'text', (column) => column.notNull())
    .addColumn('provider_session_id', 'text', (column) => column.unique())
    .addColumn('provider_payment_id', 'text')
    .addColumn('checkout_url', 'text')
    .addColumn('refunded_amount', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('refund_owed', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('flag', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema
    .createIndex('payment_orders_account')
    .on('payment_orders')
    .columns(['account_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('payment_orders_payment')
    .on('payment_orders')
    .column('provider_payment_id')
    .execute();
  await db.schema
    .createTable('payment_events')
    .addColumn('provider', 'text', (column) => column.notNull())
    .addColumn('event_id', 'text', (column) => column.notNull())
    .addColumn('type', 'text', (column) => column.notNull())
    .addColumn('order_id', 'text')
    .addColumn('outcome', 'text', (column) => column.notNull())
    .addColumn('received_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('payment_events_pk', ['provider', 'event_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('payment_events').execute();
  await db.schema.dropTable('payment_orders').execute();
}
