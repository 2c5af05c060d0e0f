/** What authentication reads and writes of a key: the lookup on a cache miss, the last use, the legacy ids. */
import type { Kysely } from '#kysely';
import type { HotQueries } from '../store/database.js';
import type { DB } from '../store/schema.js';

/**
 * Ids of keys made before checksums that may still be accepted: authentication looks up a key
 * whose checksum is wrong only when its id is here. Read once per process: no key made since
 * migration 0018 is one of them, so the set only ever shrinks.
 */
export async function listLegacyKeyIds(db: Kysely<DB>, now: number): Promise<Set<string>> {
  const nowIso = new Date(now).toISOString();
  const rows = await db
    .selectFrom('api_keys')
    .select('key_id')
    .where('checksummed', '=', 0)
    .where('expires_at', '>', nowIso)
    .where((eb) => eb.or([eb('revoked_at', 'is', null), eb('revoked_at', '>', nowIso)]))
    .execute();
  return new Set(rows.map((r) => r.key_id));
}

export interface AuthRow {
  key_id: string;
  workspace_id: string;
  environment: string;
  secret_hash: string;
  scopes: string;
  expires_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
  allowed_ips: string | null;
  modules: string;
}

/**
 * One indexed lookup: the key and its workspace's modules together. Run when the key cache
 * misses (or is bypassed); migration 0014's triggers watch exactly these columns.
 */
export async function findKeyForAuth(hot: HotQueries, keyId: string): Promise<AuthRow | undefined> {
  const rows = await hot.rows(
    `SELECT k.key_id, k.workspace_id, k.environment, k.secret_hash, k.scopes, k.expires_at, k.revoked_at, k.last_used_at, k.allowed_ips, w.modules
     FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id WHERE k.key_id = ?`,
    [keyId],
  );
  const r = rows[0] as (string | null)[] | undefined;
  if (!r) return undefined;
  return {
    key_id: r[0] as string,
    workspace_id: r[1] as string,
    environment: r[2] as string,
    secret_hash: r[3] as string,
    scopes: r[4] as string,
    expires_at: r[5] as string,
    revoked_at: r[6] ?? null,
    last_used_at: r[7] ?? null,
    allowed_ips: r[8] ?? null,
    modules: r[9] as string,
  };
}

/**
 * Records a use unless one was recorded since `notBefore`: the condition is in the statement,
 * so however many processes serve the key, the row is written at most once per interval.
 */
export async function touchKey(db: Kysely<DB>, keyId: string, at: string, ip: string, notBefore: string): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: at, last_used_ip: ip })
    .where('key_id', '=', keyId)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', notBefore)]))
    .execute();
}
