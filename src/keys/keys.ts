/**
 * API keys: their text (format and checksum) and their rows (create, roll, revoke, the lookup of
 * authentication, the stored hash of the secret).
 */
import crypto, { createHash, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { Kysely } from 'kysely';
import { recordAudit } from '../audit/audit.js';
import { AppError } from '../errors.js';
import { randomBase62 } from '../ids.js';
import { canonicalCidrs } from '../ip-ranges.js';
import { splitList } from '../lists.js';
import { ALL_SCOPES } from '../registers/define.js';
import type { Dialect, HotQueries } from '../store/database.js';
import type { DB } from '../store/schema.js';
import { refuseUnsafeName } from '../text-rules.js';
import { lockWorkspace } from '../workspaces/workspaces.js';

/**
 * The text of an API key, `svc_sk_<env>_<key_id>_<secret>`, and its checksum (issue 29).
 *
 * The last six characters of `<secret>` are the CRC32 of everything before them (the whole key
 * text up to that point, prefix included), written in base62 with leading zeros: a secret
 * scanner can tell a real key from a look-alike, and a mistyped key is refused before any
 * lookup. The other 37 characters are random (about 220 bits). Keys made before checksums
 * (migration 0018 marks them) have 43 random characters and are still accepted.
 */
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Characters of `<secret>`, checksum included. */
export const SECRET_LENGTH = 43;
export const CHECKSUM_LENGTH = 6;
export const KEY_ID_LENGTH = 16;

/** The published pattern (README, portal, secret-scanner rules): word-bounded, no flags needed. */
export const KEY_REGEX_SOURCE = `\\bsvc_sk_(?:live|test)_[0-9A-Za-z]{${KEY_ID_LENGTH}}_[0-9A-Za-z]{${SECRET_LENGTH}}\\b`;

/** `svc_sk_<env>_<key_id>_<secret>`; key_id and secret are base62, so `_` separates cleanly. */
const KEY_PATTERN = /^svc_sk_(live|test)_([0-9A-Za-z]{16})_([0-9A-Za-z]{43})$/;

export interface ParsedKey {
  environment: 'live' | 'test';
  keyId: string;
  secret: string;
  /** Whether the last six characters are the checksum of the rest (false for keys made before checksums). */
  checksumOk: boolean;
}

/** Base62 of a 32-bit unsigned number, zero-padded to six characters (62^6 > 2^32). */
export function base62Checksum(text: string): string {
  let n = crc32(text);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** The full key text for a new key: `random` is the secret's 37 random characters. */
export function formatKey(environment: 'live' | 'test', keyId: string, random: string): { key: string; secret: string } {
  const body = `svc_sk_${environment}_${keyId}_${random}`;
  const checksum = base62Checksum(body);
  return { key: body + checksum, secret: random + checksum };
}

/** True when `key` has the shape and its checksum is right: what a scanner may call a real key. */
export function hasValidChecksum(key: string): boolean {
  return key.length > CHECKSUM_LENGTH && base62Checksum(key.slice(0, -CHECKSUM_LENGTH)) === key.slice(-CHECKSUM_LENGTH);
}

export function parseKey(text: string): ParsedKey | undefined {
  const m = KEY_PATTERN.exec(text);
  if (!m) return undefined;
  return {
    environment: m[1] as 'live' | 'test',
    keyId: m[2] as string,
    secret: m[3] as string,
    checksumOk: hasValidChecksum(text),
  };
}

export const DEFAULT_KEY_DAYS = 90;
export const MAX_KEY_DAYS = 365;
const DAY_MS = 86_400_000;
/** A valid key not used for this long (or never) is marked so an admin can revoke it. */
export const UNUSED_DAYS = 30;
/** A valid key expiring within this many days is flagged (console, /metrics). */
export const EXPIRING_DAYS = 14;
/** Graces a roll offers: the old key is revoked this long after its successor is made. */
export const ROLL_GRACES: Readonly<Record<string, number>> = { '0': 0, '1h': 3_600_000, '24h': DAY_MS, '7d': 7 * DAY_MS };

/**
 * The secret carries 43 base62 characters (about 256 bits), so a single SHA-256 is a sound
 * stored form: there is nothing to brute-force that a slow hash would protect.
 */
export function hashSecret(secret: string): string {
  return sha256(secret).toString('hex');
}

/**
 * The one-shot `crypto.hash` (Node 20.12+) costs about half of a `createHash` object on the
 * request path (1.3 µs against 2.1 µs here); older Node 20 releases fall back.
 */
const sha256: (text: string) => Buffer =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'buffer')
    : (text) => createHash('sha256').update(text).digest();

const DUMMY_HASH = sha256('0'.repeat(43));

/** Constant-time check; also run against a dummy hash when the key_id is unknown. */
export function secretMatches(secret: string, storedHash: Buffer | undefined): boolean {
  const given = sha256(secret);
  const stored = storedHash ?? DUMMY_HASH;
  const equal = stored.length === given.length && timingSafeEqual(given, stored);
  return equal && storedHash !== undefined;
}

export function parseScopes(spec: string): string[] {
  const scopes = splitList(spec);
  if (scopes.length === 0) throw new AppError('invalid_parameter', 'at least one scope is required', { param: 'scopes' });
  for (const s of scopes) {
    if (!ALL_SCOPES.includes(s)) {
      throw new AppError('invalid_parameter', `unknown scope "${s}"; scopes are: ${ALL_SCOPES.join(', ')}`, {
        param: 'scopes',
      });
    }
  }
  return scopes;
}

export interface KeySummary {
  key_id: string;
  name: string;
  environment: string;
  scopes: string[];
  created_at: string;
  expires_at: string;
  /** When it was or will be revoked (a rolled key is revoked at the end of its grace). */
  revoked_at: string | null;
  last_used_at: string | null;
  /** Client address of the last use (behind WSOPS_TRUSTED_PROXIES: the client's, not the proxy's). */
  last_used_ip: string | null;
  status: 'valid' | 'expired' | 'revoked';
  /** Who created it: `cli`, `console:<email>`, `demo` (null for keys from before this was kept). */
  created_by: string | null;
  /** CIDR ranges it may be used from; null: any address. */
  allowed_ips: string[] | null;
  /** Valid, and never used or not used in the last 30 days: a candidate for revocation. */
  unused: boolean;
  /** Valid and expiring within 14 days. */
  expiring_soon: boolean;
}

export interface CreateKeyInput {
  workspaceId: string;
  scopes: string[];
  environment: 'live' | 'test';
  days?: number;
  name?: string;
  createdBy?: string;
  /** CIDR ranges (IPv4, IPv6, or bare addresses) the key may be used from; none: anywhere. */
  allowedIps?: readonly string[];
  now: number;
  maxKeys: number;
  dialect: Dialect;
}

/** A key is revoked once its revoked_at has come (a roll sets it in the future). */
function isRevoked(revokedAt: string | null, now: number): boolean {
  return revokedAt !== null && Date.parse(revokedAt) <= now;
}

function summarize(row: DB['api_keys'], now: number): KeySummary {
  const status = isRevoked(row.revoked_at, now) ? 'revoked' : Date.parse(row.expires_at) <= now ? 'expired' : 'valid';
  const valid = status === 'valid';
  return {
    key_id: row.key_id,
    name: row.name,
    environment: row.environment,
    scopes: row.scopes.split(' '),
    created_at: row.created_at,
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
    last_used_at: row.last_used_at,
    last_used_ip: row.last_used_ip,
    status,
    created_by: row.created_by,
    allowed_ips: row.allowed_ips ? row.allowed_ips.split(' ') : null,
    unused: valid && (row.last_used_at === null || Date.parse(row.last_used_at) <= now - UNUSED_DAYS * DAY_MS),
    expiring_soon: valid && Date.parse(row.expires_at) - now <= EXPIRING_DAYS * DAY_MS,
  };
}

/** The stored form of an allowlist (canonical ranges, space-separated), or a clear 400. */
export function allowlistColumn(items: readonly string[] | undefined): string | null {
  try {
    const cidrs = canonicalCidrs(items ?? []);
    return cidrs.length ? cidrs.join(' ') : null;
  } catch (err) {
    throw new AppError('invalid_parameter', (err as Error).message, { param: 'allowed_ips' });
  }
}

function checkName(raw: string | undefined): string {
  const name = (raw ?? 'API key').trim();
  if (name.length === 0 || name.length > 100) {
    throw new AppError('invalid_parameter', 'key name must be 1 to 100 characters', { param: 'name' });
  }
  refuseUnsafeName(name, 'the key name', 'name');
  return name;
}

/** Refuses a new key beyond the plan limit; run in the transaction that inserts it, workspace locked. */
async function checkPlanLimit(trx: Kysely<DB>, workspaceId: string, nowIso: string, maxKeys: number): Promise<void> {
  const { n } = await trx
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', nowIso)
    .executeTakeFirstOrThrow();
  if (Number(n) >= maxKeys) {
    throw new AppError(
      'limit_reached',
      `the plan allows ${maxKeys} unrevoked keys per workspace and ${Number(n)} exist; revoke one first (wsops key revoke)`,
    );
  }
}

/** A new key's row and its full text (shown once): the secret is 37 random characters and the checksum. */
function newKeyRow(
  fields: Omit<DB['api_keys'], 'key_id' | 'secret_hash' | 'checksummed' | 'revoked_at' | 'last_used_at' | 'last_used_ip'>,
) {
  const keyId = randomBase62(KEY_ID_LENGTH);
  const { key, secret } = formatKey(fields.environment as 'live' | 'test', keyId, randomBase62(SECRET_LENGTH - CHECKSUM_LENGTH));
  const row: DB['api_keys'] = {
    ...fields,
    key_id: keyId,
    secret_hash: hashSecret(secret),
    checksummed: 1,
    revoked_at: null,
    last_used_at: null,
    last_used_ip: null,
  };
  return { row, key };
}

export async function createKey(db: Kysely<DB>, input: CreateKeyInput): Promise<KeySummary & { key: string }> {
  const days = input.days ?? DEFAULT_KEY_DAYS;
  if (!Number.isInteger(days) || days < 1 || days > MAX_KEY_DAYS) {
    throw new AppError('invalid_parameter', `key life must be a whole number of days from 1 to ${MAX_KEY_DAYS}; got ${days}`, {
      param: 'days',
    });
  }
  const name = checkName(input.name);
  const nowIso = new Date(input.now).toISOString();
  const { row, key } = newKeyRow({
    workspace_id: input.workspaceId,
    name,
    environment: input.environment,
    scopes: input.scopes.join(' '),
    created_at: nowIso,
    expires_at: new Date(input.now + days * DAY_MS).toISOString(),
    created_by: input.createdBy ?? null,
    allowed_ips: allowlistColumn(input.allowedIps),
  });
  await db.transaction().execute(async (trx) => {
    // Two concurrent creations must not both pass the plan limit.
    await lockWorkspace(trx, input.dialect, input.workspaceId);
    await checkPlanLimit(trx, input.workspaceId, nowIso, input.maxKeys);
    await trx.insertInto('api_keys').values(row).execute();
    await recordAudit(trx, {
      workspaceId: input.workspaceId,
      at: nowIso,
      actor: input.createdBy ?? 'cli',
      action: 'key.created',
      keyId: row.key_id,
      target: row.key_id,
      detail: {
        name,
        environment: input.environment,
        scopes: input.scopes,
        expires_at: row.expires_at,
        ...(row.allowed_ips ? { allowed_ips: row.allowed_ips.split(' ') } : {}),
      },
    });
  });
  return { ...summarize(row, input.now), key };
}

export async function listKeys(db: Kysely<DB>, workspaceId: string, now: number): Promise<KeySummary[]> {
  const rows = await db.selectFrom('api_keys').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at').execute();
  return rows.map((r) => summarize(r, now));
}

export async function revokeKey(db: Kysely<DB>, workspaceId: string, keyId: string, now: number, actor = 'cli'): Promise<KeySummary> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('api_keys')
      .selectAll()
      .where('key_id', '=', keyId)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
    if (!row) throw new AppError('not_found', `no key ${keyId} in workspace ${workspaceId}; list them with: wsops key list`);
    if (isRevoked(row.revoked_at, now)) return summarize(row, now);
    // Also a key in the grace of a roll: revoked now rather than at the end of its grace.
    const revokedAt = new Date(now).toISOString();
    await trx.updateTable('api_keys').set({ revoked_at: revokedAt }).where('key_id', '=', keyId).execute();
    await recordAudit(trx, { workspaceId, at: revokedAt, actor, action: 'key.revoked', keyId, target: keyId });
    return summarize({ ...row, revoked_at: revokedAt }, now);
  });
}

export interface RollKeyInput {
  workspaceId: string;
  keyId: string;
  /** One of ROLL_GRACES: how long the old key stays valid beside its successor. */
  grace: string;
  actor: string;
  now: number;
  maxKeys: number;
  dialect: Dialect;
}

export interface RolledKey {
  /** The new key: same name, scopes, environment, allowlist and life; its secret shown once. */
  successor: KeySummary & { key: string };
  /** The old key, revoked at `revoked_at` (now, or at the end of the grace). */
  rolled: KeySummary;
}

export function parseGrace(text: string): number {
  const ms = ROLL_GRACES[text.trim()];
  if (ms === undefined) {
    throw new AppError(
      'invalid_parameter',
      `grace must be one of ${Object.keys(ROLL_GRACES).join(', ')} (0: revoke the old key now); got "${text.slice(0, 20)}"`,
      {
        param: 'grace',
      },
    );
  }
  return ms;
}

/**
 * Rolls a key (the description's rotation recipe in one step): creates its successor and
 * schedules the old key's revocation at the end of the grace; both are valid meanwhile. The old
 * key no longer counts toward the plan limit (it is on its way out), so a roll works at the limit.
 */
export async function rollKey(db: Kysely<DB>, input: RollKeyInput): Promise<RolledKey> {
  const graceMs = parseGrace(input.grace);
  const nowIso = new Date(input.now).toISOString();
  const revokesAt = new Date(input.now + graceMs).toISOString();
  return db.transaction().execute(async (trx) => {
    await lockWorkspace(trx, input.dialect, input.workspaceId);
    const old = await trx
      .selectFrom('api_keys')
      .selectAll()
      .where('key_id', '=', input.keyId)
      .where('workspace_id', '=', input.workspaceId)
      .executeTakeFirst();
    if (!old) throw new AppError('not_found', `no key ${input.keyId} in workspace ${input.workspaceId}; list them with: wsops key list`);
    const current = summarize(old, input.now);
    if (current.status !== 'valid' || old.revoked_at !== null) {
      const why = old.revoked_at !== null && current.status === 'valid' ? `already rolled (revoked at ${old.revoked_at})` : current.status;
      throw new AppError(
        'invalid_state',
        `key ${input.keyId} is ${why}: only a valid key can be rolled; create a new key instead (wsops key create)`,
      );
    }
    await trx.updateTable('api_keys').set({ revoked_at: revokesAt }).where('key_id', '=', old.key_id).execute();
    await checkPlanLimit(trx, input.workspaceId, nowIso, input.maxKeys);
    const lifeMs = Math.min(MAX_KEY_DAYS * DAY_MS, Math.max(DAY_MS, Date.parse(old.expires_at) - Date.parse(old.created_at)));
    const { row, key } = newKeyRow({
      workspace_id: input.workspaceId,
      name: old.name,
      environment: old.environment,
      scopes: old.scopes,
      created_at: nowIso,
      expires_at: new Date(input.now + lifeMs).toISOString(),
      created_by: input.actor,
      allowed_ips: old.allowed_ips,
    });
    await trx.insertInto('api_keys').values(row).execute();
    await recordAudit(trx, {
      workspaceId: input.workspaceId,
      at: nowIso,
      actor: input.actor,
      action: 'key.created',
      keyId: row.key_id,
      target: row.key_id,
      detail: {
        name: row.name,
        environment: row.environment,
        scopes: row.scopes.split(' '),
        expires_at: row.expires_at,
        rolled_from: old.key_id,
      },
    });
    await recordAudit(trx, {
      workspaceId: input.workspaceId,
      at: nowIso,
      actor: input.actor,
      action: 'key.rolled',
      keyId: old.key_id,
      target: old.key_id,
      detail: { successor: row.key_id, grace: input.grace.trim(), revoked_at: revokesAt },
    });
    return { successor: { ...summarize(row, input.now), key }, rolled: summarize({ ...old, revoked_at: revokesAt }, input.now) };
  });
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

/** Valid keys expiring within EXPIRING_DAYS, every workspace: a /metrics gauge. */
export async function countExpiringKeys(db: Kysely<DB>, now: number): Promise<number> {
  const nowIso = new Date(now).toISOString();
  const { n } = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('expires_at', '>', nowIso)
    .where('expires_at', '<=', new Date(now + EXPIRING_DAYS * DAY_MS).toISOString())
    .where((eb) => eb.or([eb('revoked_at', 'is', null), eb('revoked_at', '>', nowIso)]))
    .executeTakeFirstOrThrow();
  return Number(n);
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
