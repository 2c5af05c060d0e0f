/**
 * The lifecycle of API keys: create (within the plan's limit), list, revoke, roll with a grace,
 * and the count of keys about to expire. Their text is key-format.ts, the stored hash
 * key-hashing.ts, the allowlist key-allowlists.ts, what authentication reads key-lookup.ts.
 */
import type { Kysely } from '#kysely';
import { recordAudit } from '../audit/audit.js';
import { AppError } from '../errors.js';
import { randomBase62 } from '../ids.js';
import { splitList } from '../lists.js';
import { ALL_SCOPES } from '../registers/define.js';
import type { DB } from '../store/schema.js';
import { refuseUnsafeName } from '../text-rules.js';
import { type LockingDatabase, lockWorkspace } from '../workspaces/workspaces.js';
import { allowlistColumn } from './key-allowlists.js';
import { CHECKSUM_LENGTH, formatKey, KEY_ID_LENGTH, SECRET_LENGTH } from './key-format.js';
import { hashSecret } from './key-hashing.js';
import { isRevoked, type KeySummary, summarize } from './key-summary.js';
import { DAY_MS, DEFAULT_KEY_DAYS, EXPIRING_DAYS, MAX_KEY_DAYS, ROLL_GRACES } from './key-terms.js';

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

export async function createKey(database: LockingDatabase, input: CreateKeyInput): Promise<KeySummary & { key: string }> {
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
  await database.db.transaction().execute(async (trx) => {
    // Two concurrent creations must not both pass the plan limit.
    await lockWorkspace(trx, database.engine, input.workspaceId);
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
export async function rollKey(database: LockingDatabase, input: RollKeyInput): Promise<RolledKey> {
  const graceMs = parseGrace(input.grace);
  const nowIso = new Date(input.now).toISOString();
  const revokesAt = new Date(input.now + graceMs).toISOString();
  return database.db.transaction().execute(async (trx) => {
    await lockWorkspace(trx, database.engine, input.workspaceId);
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
