import type { Kysely } from '#kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // When the endpoint's current run of failures began (null while it is healthy): the failing
  // stage is measured from it, and it names the failure episode an alert belongs to.
  await db.schema.alterTable('webhook_endpoints').addColumn('failing_since', 'text').execute();
  // Failure alerts, one per endpoint, stage and episode; a worker mails the pending ones.
  await db.schema
    .createTable('endpoint_alerts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('endpoint_id', 'text', (c) => c.notNull())
    .addColumn('stage', 'text', (c) => c.notNull())
    .addColumn('episode', 'text', (c) => c.notNull())
    .addColumn('error_class', 'text')
    .addColumn('last_failure', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('recipients', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('sent_at', 'text')
    .addUniqueConstraint('endpoint_alerts_once', ['endpoint_id', 'stage', 'episode'])
    .execute();
  await db.schema.createIndex('endpoint_alerts_due').on('endpoint_alerts').columns(['state', 'next_attempt_at']).execute();
  await db.schema.createIndex('endpoint_alerts_endpoint').on('endpoint_alerts').columns(['endpoint_id', 'created_at']).execute();
}
