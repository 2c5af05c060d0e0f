/** A key's IP allowlist: its stored form and its replacement. */
import type { Kysely } from '#kysely';
import { recordAudit } from '../audit/audit.js';
import { AppError } from '../errors.js';
import { canonicalCidrs } from '../ip-ranges.js';
import type { DB } from '../store/schema.js';
import { type KeySummary, summarize } from './key-summary.js';

/** The stored form of an allowlist (canonical ranges, space-separated), or a clear 400. */
export function allowlistColumn(items: readonly string[] | undefined): string | null {
  try {
    const cidrs = canonicalCidrs(items ?? []);
    return cidrs.length ? cidrs.join(' ') : null;
  } catch (err) {
    throw new AppError('invalid_parameter', (err as Error).message, { param: 'allowed_ips' });
  }
}

/** Replaces a key's IP allowlist (empty: any address); audited. Effective on the next request (the key caches are told). */
export async function setAllowedIps(
  db: Kysely<DB>,
  input: { workspaceId: string; keyId: string; allowedIps: readonly string[]; actor: string; now: number },
): Promise<KeySummary> {
  const column = allowlistColumn(input.allowedIps);
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('api_keys')
      .selectAll()
      .where('key_id', '=', input.keyId)
      .where('workspace_id', '=', input.workspaceId)
      .executeTakeFirst();
    if (!row) throw new AppError('not_found', `no key ${input.keyId} in workspace ${input.workspaceId}; list them with: wsops key list`);
    await trx.updateTable('api_keys').set({ allowed_ips: column }).where('key_id', '=', row.key_id).execute();
    const at = new Date(input.now).toISOString();
    await recordAudit(trx, {
      workspaceId: input.workspaceId,
      at,
      actor: input.actor,
      action: 'key.allowlist_changed',
      keyId: row.key_id,
      target: row.key_id,
      detail: { allowed_ips: column ? column.split(' ') : null },
    });
    return summarize({ ...row, allowed_ips: column }, input.now);
  });
}
