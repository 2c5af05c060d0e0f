/**
 * Workspace SCIM tokens: the credential an identity provider provisions people with. A kind of
 * its own, `svc_scim_<env>_<token_id>_<secret>`, so neither an API key nor a SCIM token passes
 * the other's parser; the secret's randomness, checksum, stored hash and constant-time compare
 * are the API keys' own (src/keys/keys.ts).
 */
import type { Kysely } from '#kysely';
import { recordAudit } from '../audit/audit.js';
import { AppError } from '../errors.js';
import { randomBase62 } from '../ids.js';
import { base62Checksum, CHECKSUM_LENGTH, hasValidChecksum, KEY_ID_LENGTH, SECRET_LENGTH } from '../keys/key-format.js';
import { hashSecret, secretMatches } from '../keys/key-hashing.js';
import { DAY_MS, MAX_KEY_DAYS } from '../keys/key-terms.js';
import type { Database } from '../store/database.js';
import type { DB } from '../store/schema.js';
import { refuseUnsafeName } from '../text-rules.js';

/** The published pattern (README, secret scanners). */
export const SCIM_TOKEN_REGEX_SOURCE = `\\bsvc_scim_(?:live|test)_[0-9A-Za-z]{${KEY_ID_LENGTH}}_[0-9A-Za-z]{${SECRET_LENGTH}}\\b`;
const TOKEN_PATTERN = new RegExp(`^svc_scim_(live|test)_([0-9A-Za-z]{${KEY_ID_LENGTH}})_([0-9A-Za-z]{${SECRET_LENGTH}})$`);

/** Valid (unrevoked, unexpired) tokens a workspace may hold: one per identity provider, and a few for a change-over. */
export const MAX_SCIM_TOKENS = 5;

export interface ParsedScimToken {
  environment: 'live' | 'test';
  tokenId: string;
  secret: string;
}

/** The token's parts, or undefined when it is not a SCIM token or its checksum is wrong (mistyped). */
export function parseScimToken(text: string): ParsedScimToken | undefined {
  const m = TOKEN_PATTERN.exec(text);
  if (!m || !hasValidChecksum(text)) return undefined;
  return { environment: m[1] as 'live' | 'test', tokenId: m[2] as string, secret: m[3] as string };
}

export interface ScimTokenSummary {
  token_id: string;
  name: string;
  environment: string;
  location_id: string;
  created_at: string;
  created_by: string;
  revoked_at: string | null;
  last_used_at: string | null;
  /** When it stops working; null: until revoked. */
  expires_at: string | null;
  status: 'valid' | 'revoked' | 'expired';
}

const expired = (row: Pick<DB['scim_tokens'], 'expires_at'>, now: number) => row.expires_at !== null && Date.parse(row.expires_at) <= now;

function summarize(row: DB['scim_tokens'], now: number): ScimTokenSummary {
  const { secret_hash: _hash, workspace_id: _ws, ...rest } = row;
  return { ...rest, status: row.revoked_at !== null ? 'revoked' : expired(row, now) ? 'expired' : 'valid' };
}

export interface CreateScimTokenInput {
  workspaceId: string;
  environment: 'live' | 'test';
  /** Where people this token creates are placed: a location of the workspace. */
  locationId: string;
  name?: string;
  /** Days the token works (1 to MAX_KEY_DAYS, as an API key); absent: until revoked. */
  days?: number;
  createdBy: string;
  now: number;
}

function checkName(raw: string | undefined): string {
  const name = (raw ?? 'SCIM token').trim();
  if (name.length === 0 || name.length > 100) {
    throw new AppError('invalid_parameter', 'the token name must be 1 to 100 characters', { param: 'name' });
  }
  refuseUnsafeName(name, 'the token name', 'name');
  return name;
}

/** Creates a token; its text is returned once and only its hash is kept. */
export async function createScimToken(
  database: Pick<Database, 'db' | 'engine'>,
  input: CreateScimTokenInput,
): Promise<ScimTokenSummary & { token: string }> {
  const name = checkName(input.name);
  if (!/^loc_[A-Za-z0-9_-]{1,64}$/.test(input.locationId)) {
    throw new AppError('invalid_parameter', 'the location must be a location id (loc_...)', { param: 'location' });
  }
  if (input.days !== undefined && (!Number.isInteger(input.days) || input.days < 1 || input.days > MAX_KEY_DAYS)) {
    throw new AppError(
      'invalid_parameter',
      `a token's life must be a whole number of days from 1 to ${MAX_KEY_DAYS} (or none: until revoked); got ${input.days}`,
      { param: 'days' },
    );
  }
  const tokenId = randomBase62(KEY_ID_LENGTH);
  const body = `svc_scim_${input.environment}_${tokenId}_${randomBase62(SECRET_LENGTH - CHECKSUM_LENGTH)}`;
  const token = body + base62Checksum(body);
  const secret = token.slice(-SECRET_LENGTH);
  const nowIso = new Date(input.now).toISOString();
  const row: DB['scim_tokens'] = {
    token_id: tokenId,
    workspace_id: input.workspaceId,
    name,
    environment: input.environment,
    secret_hash: hashSecret(secret),
    location_id: input.locationId,
    created_at: nowIso,
    created_by: input.createdBy,
    revoked_at: null,
    last_used_at: null,
    expires_at: input.days === undefined ? null : new Date(input.now + input.days * DAY_MS).toISOString(),
  };
  await database.db.transaction().execute(async (trx) => {
    // The workspace's row locked first: two creations at once (several API processes) would
    // otherwise both count four tokens and both insert a fifth. SQLite's BEGIN IMMEDIATE holds
    // the database's write lock already.
    await database.engine.lockRows(trx.selectFrom('workspaces').select('id').where('id', '=', input.workspaceId)).execute();
    const location = await trx
      .selectFrom('records')
      .select('doc')
      .where('workspace_id', '=', input.workspaceId)
      .where('register', '=', 'locations')
      .where('id', '=', input.locationId)
      .executeTakeFirst();
    if (!location) {
      throw new AppError('invalid_parameter', `no location ${input.locationId} in workspace ${input.workspaceId}`, { param: 'location' });
    }
    const { n } = await trx
      .selectFrom('scim_tokens')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', input.workspaceId)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', nowIso)]))
      .executeTakeFirstOrThrow();
    if (Number(n) >= MAX_SCIM_TOKENS) {
      throw new AppError('limit_reached', `a workspace holds at most ${MAX_SCIM_TOKENS} valid SCIM tokens; revoke one first`);
    }
    await trx.insertInto('scim_tokens').values(row).execute();
    await recordAudit(trx, {
      workspaceId: input.workspaceId,
      at: nowIso,
      actor: input.createdBy,
      action: 'scim.token_created',
      target: tokenId,
      detail: { name, environment: input.environment, location_id: input.locationId, expires_at: row.expires_at },
    });
  });
  return { ...summarize(row, input.now), token };
}

export async function listScimTokens(db: Kysely<DB>, workspaceId: string, now: number): Promise<ScimTokenSummary[]> {
  const rows = await db.selectFrom('scim_tokens').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at').execute();
  return rows.map((r) => summarize(r, now));
}

export async function revokeScimToken(db: Kysely<DB>, workspaceId: string, tokenId: string, now: number, actor: string) {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('scim_tokens')
      .selectAll()
      .where('token_id', '=', tokenId)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
    if (!row)
      throw new AppError(
        'not_found',
        `no SCIM token ${tokenId.slice(0, 40)} in workspace ${workspaceId}; list them with: wsops scim token list`,
      );
    if (row.revoked_at !== null) return summarize(row, now);
    const revokedAt = new Date(now).toISOString();
    await trx.updateTable('scim_tokens').set({ revoked_at: revokedAt }).where('token_id', '=', tokenId).execute();
    await recordAudit(trx, { workspaceId, at: revokedAt, actor, action: 'scim.token_revoked', target: tokenId });
    return summarize({ ...row, revoked_at: revokedAt }, now);
  });
}

export interface ScimTokenEntry {
  tokenId: string;
  workspaceId: string;
  locationId: string;
  lastUsedAt: string | null;
}

/**
 * The token's row when the text is a valid, unrevoked, unexpired token of this deployment's environment.
 * The hash is compared whether or not the token id exists, so timing tells nothing. SCIM traffic
 * is a few requests per change in the identity provider: one indexed read a request, no cache.
 */
export async function findScimToken(db: Kysely<DB>, text: string, deployment: string, now: number): Promise<ScimTokenEntry | undefined> {
  const parsed = parseScimToken(text);
  if (!parsed) return undefined;
  const row = await db.selectFrom('scim_tokens').selectAll().where('token_id', '=', parsed.tokenId).executeTakeFirst();
  const ok = secretMatches(parsed.secret, row ? Buffer.from(row.secret_hash, 'hex') : undefined);
  if (
    !ok ||
    !row ||
    row.revoked_at !== null ||
    expired(row, now) ||
    row.environment !== parsed.environment ||
    parsed.environment !== deployment
  )
    return undefined;
  return { tokenId: row.token_id, workspaceId: row.workspace_id, locationId: row.location_id, lastUsedAt: row.last_used_at };
}

/** Last use, at most one write a minute per token. */
export async function touchScimToken(db: Kysely<DB>, entry: ScimTokenEntry, now: number): Promise<void> {
  if (entry.lastUsedAt !== null && now - Date.parse(entry.lastUsedAt) < 60_000) return;
  await db
    .updateTable('scim_tokens')
    .set({ last_used_at: new Date(now).toISOString() })
    .where('token_id', '=', entry.tokenId)
    .execute();
}
