import type { Kysely } from 'kysely';
import { newId } from '../ids.js';
import type { DB } from './schema.js';

export interface AuditEntry {
  workspaceId: string;
  at: string;
  /** Who did it: `cli`, `console:<email>`, `key:<key_id>`, `system`. */
  actor: string;
  action: string;
  keyId?: string | null;
  target?: string | null;
  detail?: Record<string, unknown>;
}

export async function recordAudit(db: Kysely<DB>, e: AuditEntry): Promise<void> {
  await db
    .insertInto('audit_events')
    .values({
      id: newId('aud'),
      workspace_id: e.workspaceId,
      at: e.at,
      actor: e.actor,
      action: e.action,
      key_id: e.keyId ?? null,
      target: e.target ?? null,
      detail: JSON.stringify(e.detail ?? {}),
    })
    .execute();
}

export async function listAudit(db: Kysely<DB>, workspaceId: string, limit = 100) {
  const rows = await db
    .selectFrom('audit_events')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .orderBy('seq', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    at: r.at,
    actor: r.actor,
    action: r.action,
    key_id: r.key_id,
    target: r.target,
    detail: JSON.parse(r.detail) as Record<string, unknown>,
  }));
}
