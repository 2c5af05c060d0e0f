import type { Kysely } from '#kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // One row per import (HTTP, CLI or console): what the Data page lists.
  await db.schema
    .createTable('record_imports')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .addColumn('dry_run', 'integer', (c) => c.notNull())
    .addColumn('atomic', 'integer', (c) => c.notNull())
    .addColumn('lines', 'integer', (c) => c.notNull())
    .addColumn('refused', 'integer', (c) => c.notNull())
    .addColumn('report', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('record_imports_workspace').on('record_imports').columns(['workspace_id', 'started_at']).execute();
}
