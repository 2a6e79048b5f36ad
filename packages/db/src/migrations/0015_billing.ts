import type { Kysely } from 'kysely';

/**
 * Buying (issue 38): orders from a checkout (the built-in test checkout or a payment provider), the
 * provider events already applied (idempotency by event id), the provider's customer of each account,
 * the audit of plan changes, the traffic charged per file of a run (each byte counted once across
 * resumed attempts), and the questionnaire answers (its reward is granted once per account).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('billing_orders')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('product', 'text', (c) => c.notNull())
    .addColumn('amount', 'integer', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('checkout_id', 'text')
    .addColumn('subscription_id', 'text')
    .addColumn('payment_id', 'text')
    .addColumn('license_id', 'text')
    .addColumn('packet_id', 'text')
    .addColumn('paid_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('billing_orders_user').on('billing_orders').columns(['user_id', 'created_at']).execute();
  await db.schema.createIndex('billing_orders_subscription').on('billing_orders').column('subscription_id').execute();
  await db.schema
    .createTable('billing_events')
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('billing_events_pk', ['provider', 'event_id'])
    .execute();
  await db.schema
    .createTable('billing_customers')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('customer_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('billing_customers_pk', ['user_id', 'provider'])
    .execute();
  await db.schema
    .createTable('billing_audit')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('billing_audit_user').on('billing_audit').columns(['user_id', 'created_at']).execute();
  await db.schema
    .createTable('traffic_charges')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('traffic_charges_created').on('traffic_charges').column('created_at').execute();
  await db.schema
    .createTable('survey_responses')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('answers', 'text', (c) => c.notNull())
    .addColumn('packet_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of [
    'survey_responses',
    'traffic_charges',
    'billing_audit',
    'billing_customers',
    'billing_events',
    'billing_orders',
  ]) {
    await db.schema.dropTable(t).execute();
  }
}
