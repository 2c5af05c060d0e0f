import { type Kysely, sql } from '#kysely';
import type { Dialect } from '../database.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  // API requests per key and hour, summed by every API process (src/keys/usage.ts).
  await db.schema
    .createTable('api_usage')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('hour', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('requests', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('api_usage_pk', ['workspace_id', 'hour', 'key_id'])
    .execute();
  await db.schema.createIndex('api_usage_hour').on('api_usage').columns(['hour']).execute();
  // The audit trail is filtered by kind (the action's prefix) and by actor, and paged by
  // seq: one index per filter keeps each page a range scan, however long the trail.
  await db.schema.alterTable('audit_events').addColumn('kind', 'text').execute();
  await db.schema.alterTable('audit_events').addColumn('actor_kind', 'text').execute();
  const prefix =
    dialect === 'sqlite'
      ? sql`CASE WHEN instr(action, '.') > 0 THEN substr(action, 1, instr(action, '.') - 1) ELSE action END`
      : sql`split_part(action, '.', 1)`;
  await sql`UPDATE audit_events SET kind = ${prefix}, actor_kind = CASE
    WHEN actor IN ('cli', 'operator') THEN 'operator'
    WHEN actor LIKE 'console:%' THEN 'console'
    WHEN actor LIKE 'key:%' THEN 'key'
    ELSE actor END`.execute(db);
  await sql`UPDATE audit_events SET kind = 'delivery' WHERE kind = 'deliveries'`.execute(db);
  await db.schema.createIndex('audit_events_kind').on('audit_events').columns(['workspace_id', 'kind', 'seq']).execute();
  await db.schema.createIndex('audit_events_actor_kind').on('audit_events').columns(['workspace_id', 'actor_kind', 'seq']).execute();
  await db.schema.createIndex('audit_events_actor').on('audit_events').columns(['workspace_id', 'actor', 'seq']).execute();
}
