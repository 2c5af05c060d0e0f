/**
 * Console admins of a workspace: listed and removed. An email address is an active admin of at
 * most one workspace in the whole deployment, so sign-in needs only email and password (no
 * workspace picker). Removed admins keep their row (the audit trail and "added by" refer to it);
 * the same address may be added again later. Passwords are passwords.ts, sign-in links
 * sign-in-links.ts, sessions sessions.ts.
 */
import type { Kysely } from '#kysely';
import { recordAudit } from '../audit/audit.js';
import { AppError } from '../errors.js';
import type { DB } from '../store/schema.js';
import { type LockingDatabase, lockWorkspace } from '../workspaces/workspaces.js';
import { type Admin, toAdmin } from './admin-rows.js';
import { voidOpenLinks } from './sign-in-links.js';

/** The active admins of a workspace, oldest first. */
export async function listAdmins(db: Kysely<DB>, workspaceId: string): Promise<Admin[]> {
  const rows = await db
    .selectFrom('console_admins')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('removed_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toAdmin);
}

export interface RemoveAdminInput {
  workspaceId: string;
  /** An admin id (`adm_...`) or an email address. */
  admin: string;
  actor: string;
  now: number;
  /**
   * When an admin removes another in the console: they may not remove themselves, nor the last
   * admin (the workspace would have nobody left to manage it). The operator CLI may.
   */
  byAdminId?: string;
}

/**
 * Removes an admin: their sessions end and their links stop working at once. Keys and endpoints
 * they created keep working (they belong to the workspace, not to the person).
 */
export async function removeAdmin(database: LockingDatabase, input: RemoveAdminInput): Promise<Admin> {
  const nowIso = new Date(input.now).toISOString();
  const ref = input.admin.trim();
  return database.db.transaction().execute(async (trx) => {
    await lockWorkspace(trx, database.engine, input.workspaceId);
    const row = await trx
      .selectFrom('console_admins')
      .selectAll()
      .where('workspace_id', '=', input.workspaceId)
      .where('removed_at', 'is', null)
      .where(ref.includes('@') ? 'email' : 'id', '=', ref.includes('@') ? ref.toLowerCase() : ref)
      .executeTakeFirst();
    if (!row) throw new AppError('not_found', `no admin ${ref} in workspace ${input.workspaceId}; list them with: wsops admin list`);
    if (input.byAdminId !== undefined) {
      if (row.id === input.byAdminId) {
        throw new AppError('invalid_state', 'you cannot remove yourself; ask another admin of this workspace to do it');
      }
      const { n } = await trx
        .selectFrom('console_admins')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('workspace_id', '=', input.workspaceId)
        .where('removed_at', 'is', null)
        .executeTakeFirstOrThrow();
      if (Number(n) <= 1) throw new AppError('invalid_state', 'the last admin of a workspace cannot be removed');
    }
    await trx.updateTable('console_admins').set({ removed_at: nowIso }).where('id', '=', row.id).execute();
    await trx.deleteFrom('console_sessions').where('admin_id', '=', row.id).execute();
    await voidOpenLinks(trx, row.id, nowIso);
    await recordAudit(trx, {
      workspaceId: input.workspaceId,
      at: nowIso,
      actor: input.actor,
      action: 'admin.removed',
      target: row.id,
      detail: { email: row.email },
    });
    return toAdmin(row);
  });
}
