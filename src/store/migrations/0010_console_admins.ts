import { type Kysely, sql } from '#kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Console admins. An address is an active admin of one workspace only (sign-in is email
  // and password, no workspace picker); removed admins keep their row for the audit trail.
  await db.schema
    .createTable('console_admins')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('removed_at', 'text')
    .addColumn('last_sign_in_at', 'text')
    .execute();
  await db.schema
    .createIndex('console_admins_active_email')
    .on('console_admins')
    .column('email')
    .unique()
    .where(sql.ref('removed_at'), 'is', null)
    .execute();
  await db.schema.createIndex('console_admins_workspace').on('console_admins').columns(['workspace_id']).execute();
  // One-time links and sessions: only SHA-256 hashes of their tokens are stored.
  await db.schema
    .createTable('console_sign_in_links')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('admin_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .execute();
  await db.schema.createIndex('console_sign_in_links_admin').on('console_sign_in_links').columns(['admin_id']).execute();
  await db.schema
    .createTable('console_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('admin_id', 'text', (c) => c.notNull())
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('console_sessions_admin').on('console_sessions').columns(['admin_id']).execute();
}
