import type { Kysely } from '#kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('disabled_reason', 'text')
    .addColumn('secret_ciphertext', 'text', (c) => c.notNull())
    .addColumn('previous_secret_ciphertext', 'text')
    .addColumn('previous_secret_expires_at', 'text')
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_failure', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('verified_at', 'text')
    .addColumn('disabled_at', 'text')
    .execute();
  await db.schema.createIndex('webhook_endpoints_workspace').on('webhook_endpoints').columns(['workspace_id', 'status']).execute();
  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_workspace').on('events').columns(['workspace_id', 'created_at']).execute();
  await db.schema
    .createTable('delivery_jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('endpoint_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // The queue: due pending jobs in run-time order. Deliberately the only index beside the
  // primary key: the claim must always walk it in order, and a second index on
  // endpoint_id would tempt the planner (with stale statistics) into reading every
  // pending job of an endpoint and sorting them.
  await db.schema.createIndex('delivery_jobs_due').on('delivery_jobs').columns(['state', 'next_attempt_at']).execute();
  await db.schema
    .createTable('delivery_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('job_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('endpoint_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('attempted_at', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('error_class', 'text')
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .addColumn('response_body', 'text')
    .addColumn('next_attempt_at', 'text')
    .execute();
  await db.schema.createIndex('delivery_attempts_workspace').on('delivery_attempts').columns(['workspace_id', 'attempted_at']).execute();
  await db.schema.createIndex('delivery_attempts_job').on('delivery_attempts').columns(['job_id']).execute();
  await db.schema.createIndex('delivery_attempts_endpoint').on('delivery_attempts').columns(['endpoint_id', 'attempted_at']).execute();
  await db.schema
    .createTable('renewal_notices')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('vendor_id', 'text', (c) => c.notNull())
    .addColumn('renewal_date', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('renewal_notices_pk', ['workspace_id', 'vendor_id', 'renewal_date'])
    .execute();
}
