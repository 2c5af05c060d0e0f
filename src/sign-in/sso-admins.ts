/**
 * The admin a single sign-on answer stands for: the active admin of the workspace with that
 * address, or, when the workspace allows it, one created just in time (no password: they sign
 * in by SSO; an invitation link can still give them one).
 */
import type { Kysely } from '#kysely';
import { recordAudit } from '../audit/audit.js';
import { newId } from '../ids.js';
import type { DB } from '../store/schema.js';
import { type LockingDatabase, lockWorkspace } from '../workspaces/workspaces.js';

export async function ssoAdmin(
  database: LockingDatabase,
  input: { workspaceId: string; email: string; create: boolean; now: number },
): Promise<{ id: string; created: boolean } | undefined> {
  const find = (trx: Kysely<DB>) =>
    trx
      .selectFrom('console_admins')
      .select('id')
      .where('workspace_id', '=', input.workspaceId)
      .where('email', '=', input.email)
      .where('removed_at', 'is', null)
      .executeTakeFirst();
  const existing = await find(database.db);
  if (existing) return { id: existing.id, created: false };
  if (!input.create) return undefined;
  return database.db.transaction().execute(async (trx) => {
    await lockWorkspace(trx, database.engine, input.workspaceId);
    const again = await find(trx);
    if (again) return { id: again.id, created: false };
    const nowIso = new Date(input.now).toISOString();
    const id = newId('adm');
    await trx
      .insertInto('console_admins')
      .values({
        id,
        workspace_id: input.workspaceId,
        email: input.email,
        password_hash: null,
        created_at: nowIso,
        created_by: 'sso',
        removed_at: null,
        last_sign_in_at: null,
      })
      .execute();
    await recordAudit(trx, {
      workspaceId: input.workspaceId,
      at: nowIso,
      actor: 'sso',
      action: 'admin.added',
      target: id,
      detail: { email: input.email, via: 'sso' },
    });
    return { id, created: true };
  });
}
