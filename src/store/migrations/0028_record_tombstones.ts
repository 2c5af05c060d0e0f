import type { Kysely } from '#kysely';

/**
 * The deletions feed (`GET /api/v1/{register}/deletions`): one tombstone per deleted id, in a
 * table of its own so list pages never read past them. The index is the feed's order, as
 * `records_order` is the lists'. A record written again under the same id removes its
 * tombstone; a second deletion writes it again with the later time.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('record_tombstones')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('register', 'text', (c) => c.notNull())
    .addColumn('deleted_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('record_tombstones_pk', ['workspace_id', 'id'])
    .execute();
  await db.schema
    .createIndex('record_tombstones_order')
    .on('record_tombstones')
    .columns(['workspace_id', 'register', 'deleted_at', 'id'])
    .execute();
  // Pruning removes what is older than the retention, across workspaces.
  await db.schema.createIndex('record_tombstones_age').on('record_tombstones').column('deleted_at').execute();
}
