import type { Kysely } from '#kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The console's per-endpoint delivery history, keyset-paged on (created_at, id) newest
  // first: created_at never changes, so a job retried while someone pages never moves
  // between pages. One index per filter (none, outcome = state, event type). The claim
  // still walks delivery_jobs_due in order: it runs with enable_sort off on PostgreSQL
  // (ADR 6), so these indexes cannot lure it into an endpoint scan plus a sort.
  await db.schema.createIndex('delivery_jobs_endpoint_history').on('delivery_jobs').columns(['endpoint_id', 'created_at', 'id']).execute();
  await db.schema
    .createIndex('delivery_jobs_endpoint_state')
    .on('delivery_jobs')
    .columns(['endpoint_id', 'state', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('delivery_jobs_endpoint_type')
    .on('delivery_jobs')
    .columns(['endpoint_id', 'event_type', 'created_at', 'id'])
    .execute();
  // The 24 h / 7 d chart reads only this index (an index-only scan on PostgreSQL): time
  // range of one endpoint, outcome and latency. It replaces the narrower endpoint index.
  await db.schema
    .createIndex('delivery_attempts_endpoint_stats')
    .on('delivery_attempts')
    .columns(['endpoint_id', 'attempted_at', 'outcome', 'latency_ms'])
    .execute();
  await db.schema.dropIndex('delivery_attempts_endpoint').execute();
}
