import type { Kysely } from '#kysely';

/**
 * Issue 58:
 * - The events API (`GET /api/v1/events`) pages a workspace's events in `(created_at, id)`
 *   order: the index carries the id too, so a page after a cursor's position is one range scan.
 *   It replaces `events_workspace` (0002), whose columns are its prefix.
 * - `alert_recipients`: the addresses a workspace's failure alerts also go to, besides its
 *   console admins (a team mailbox), one row per workspace and address.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('events_listing').on('events').columns(['workspace_id', 'created_at', 'id']).execute();
  await db.schema.dropIndex('events_workspace').execute();
  await db.schema
    .createTable('alert_recipients')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('alert_recipients_pk', ['workspace_id', 'email'])
    .execute();
}
