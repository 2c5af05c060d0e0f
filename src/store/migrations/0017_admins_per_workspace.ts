import { type Kysely, sql } from '#kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // One address may administer several workspaces (one row, one password, per workspace),
  // so inviting an address never tells whether another tenant holds it (ADR 9).
  await db.schema.dropIndex('console_admins_active_email').execute();
  await db.schema
    .createIndex('console_admins_active_workspace_email')
    .on('console_admins')
    .columns(['workspace_id', 'email'])
    .unique()
    .where(sql.ref('removed_at'), 'is', null)
    .execute();
  await db.schema.createIndex('console_admins_email').on('console_admins').column('email').execute();
}
