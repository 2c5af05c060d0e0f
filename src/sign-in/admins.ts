/**
 * Console admins, their one-time sign-in links and their server-side sessions.
 *
 * - An email address is an active admin of at most one workspace in the whole deployment, so
 *   sign-in needs only email and password (no workspace picker). Removed admins keep their row
 *   (the audit trail and "added by" refer to it); the same address may be added again later.
 * - Passwords are hashed with scrypt (memory-hard; parameters stored with each hash, so they can
 *   be raised later without breaking existing hashes), a fresh salt per hash.
 * - Sign-in links and session cookies are random 256-bit tokens stored only as SHA-256 hashes:
 *   a database dump opens nothing.
 */
import { createHash, randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { recordAudit } from '../audit/audit.js';
import { AppError } from '../errors.js';
import { newId, randomBase62 } from '../ids.js';
import type { Dialect } from '../store/database.js';
import type { DB } from '../store/schema.js';
import { refuseUnsafeName } from '../text-rules.js';
import { lockWorkspace } from '../workspaces/workspaces.js';
import { signInRules } from './sign-in-rules.js';

export const LINK_LIFE_MS = 24 * 3_600_000;
export const SESSION_IDLE_MS = 12 * 3_600_000;
export const SESSION_ABSOLUTE_MS = 7 * 24 * 3_600_000;
/** last_seen_at is written at most this often per session, not on every request. */
const SESSION_TOUCH_MS = 5 * 60_000;
export const MIN_PASSWORD_LENGTH = 12;
const MAX_PASSWORD_LENGTH = 1024;

/** scrypt cost: N=2^15, r=8, p=1 (32 MiB, tens of milliseconds): OWASP's recommended minimum. */
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, keylen: 32 } as const;

export interface Admin {
  id: string;
  workspace_id: string;
  email: string;
  created_at: string;
  created_by: string;
  last_sign_in_at: string | null;
  /** False until the admin has followed their first link and chosen a password. */
  password_set: boolean;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function toAdmin(row: DB['console_admins']): Admin {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    email: row.email,
    created_at: row.created_at,
    created_by: row.created_by,
    last_sign_in_at: row.last_sign_in_at,
    password_set: row.password_hash !== null,
  };
}

/** Trims and lower-cases an address, or refuses it with a reason. */
export function normalizeEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (email.length === 0) throw new AppError('invalid_parameter', 'an email address is required', { param: 'email' });
  refuseUnsafeName(email, 'the email address', 'email');
  if (email.length > 254 || !/^[^\s@<>"(),;:]+@[^\s@<>"(),;:]+\.[^\s@<>"(),;:.]{2,}$/.test(email)) {
    throw new AppError('invalid_parameter', `"${raw.trim().slice(0, 254)}" is not an email address (expected name@example.com)`, {
      param: 'email',
    });
  }
  return email;
}

export function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new AppError('invalid_parameter', `the password must be at least ${MIN_PASSWORD_LENGTH} characters long`, {
      param: 'password',
    });
  }
  if (password.length > MAX_PASSWORD_LENGTH) {
    throw new AppError('invalid_parameter', `the password must be at most ${MAX_PASSWORD_LENGTH} characters long`, {
      param: 'password',
    });
  }
}

function scrypt(password: string, salt: Buffer, N: number, r: number, p: number, keylen: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCallback(password, salt, keylen, { N, r, p, maxmem: 256 * N * r }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/**
 * Uses a sign-in link of the given kind once: single use even under concurrent submissions, as
 * only one UPDATE finds used_at still null. Whether this call was the one.
 */
export async function claimLink(trx: Kysely<DB>, token: string, nowIso: string, kind: { breakGlass: boolean }): Promise<boolean> {
  const claimed = await trx
    .updateTable('console_sign_in_links')
    .set({ used_at: nowIso })
    .where('token_hash', '=', sha256(token))
    .where('used_at', 'is', null)
    .where('expires_at', '>', nowIso)
    .where('break_glass', '=', kind.breakGlass ? 1 : 0)
    .executeTakeFirst();
  return Number(claimed.numUpdatedRows) === 1;
}

/** `scrypt$N$r$p$salt$hash` (salt and hash in base64). */
/** Ends every sign-in link of an admin not used yet (a new link replaces them; removal ends them). */
async function voidOpenLinks(trx: Kysely<DB>, adminId: string, nowIso: string): Promise<void> {
  await trx
    .updateTable('console_sign_in_links')
    .set({ used_at: nowIso })
    .where('admin_id', '=', adminId)
    .where('used_at', 'is', null)
    .execute();
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, SCRYPT.N, SCRYPT.r, SCRYPT.p, SCRYPT.keylen);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64'), key.toString('base64')].join('$');
}

/** A hash of nothing anyone knows: checked when the email is unknown, so timing says nothing. */
let dummyHash: Promise<string> | undefined;

async function passwordMatches(password: string, stored: string | null): Promise<boolean> {
  dummyHash ??= hashPassword(randomBase62(32));
  const encoded = stored ?? (await dummyHash);
  const [scheme, n, r, p, salt, hash] = encoded.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scrypt(
    password.slice(0, MAX_PASSWORD_LENGTH),
    Buffer.from(salt, 'base64'),
    Number(n),
    Number(r),
    Number(p),
    expected.length,
  );
  return timingSafeEqual(actual, expected) && stored !== null;
}

export interface AdminLink {
  admin: Admin;
  /** The token of the one-time link: shown once, stored only hashed. */
  token: string;
  expiresAt: string;
  /** True when the admin was added now; false for a new link to an existing admin. */
  created: boolean;
  /**
   * True while the workspace's password sign-in is off: the link opens nothing, the admin
   * signs in through single sign-on (their address is in its domain, or this was refused).
   */
  ssoOnly: boolean;
}

export interface CreateAdminLinkInput {
  workspaceId: string;
  email: string;
  /** `cli` or `console:<email>`. */
  actor: string;
  now: number;
  dialect: Dialect;
}

/**
 * Adds an admin with a one-time sign-in link, or, for an address that is already an admin of
 * this workspace, issues a new link (the "forgotten password" path). Earlier unused links of
 * that admin stop working.
 */
export async function createAdminLink(db: Kysely<DB>, input: CreateAdminLinkInput): Promise<AdminLink> {
  const email = normalizeEmail(input.email);
  const nowIso = new Date(input.now).toISOString();
  const token = randomBase62(43);
  const expiresAt = new Date(input.now + LINK_LIFE_MS).toISOString();
  return db.transaction().execute(async (trx) => {
    await lockWorkspace(trx, input.dialect, input.workspaceId);
    const rules = await signInRules(trx, input.workspaceId);
    const ssoOnly = !rules.passwordSignIn;
    if (ssoOnly && rules.sso && !inDomain(email, rules.sso.domain)) {
      throw new AppError(
        'invalid_parameter',
        `${email} is outside ${rules.sso.domain}, the only email domain this workspace's single sign-on accepts, and password sign-in is off: that address could never sign in. Invite an address of ${rules.sso.domain}`,
        { param: 'email' },
      );
    }
    const existing = await trx
      .selectFrom('console_admins')
      .selectAll()
      .where('email', '=', email)
      .where('workspace_id', '=', input.workspaceId)
      .where('removed_at', 'is', null)
      .executeTakeFirst();
    // Whatever other workspaces hold this address is never consulted: the answer must not tell.
    let row = existing;
    if (!row) {
      row = {
        id: newId('adm'),
        workspace_id: input.workspaceId,
        email,
        password_hash: null,
        created_at: nowIso,
        created_by: input.actor,
        removed_at: null,
        last_sign_in_at: null,
      };
      await trx.insertInto('console_admins').values(row).execute();
      await recordAudit(trx, {
        workspaceId: input.workspaceId,
        at: nowIso,
        actor: input.actor,
        action: 'admin.added',
        target: row.id,
        detail: { email },
      });
    } else {
      await voidOpenLinks(trx, row.id, nowIso);
      await recordAudit(trx, {
        workspaceId: input.workspaceId,
        at: nowIso,
        actor: input.actor,
        action: 'admin.link_issued',
        target: row.id,
        detail: { email },
      });
    }
    await trx
      .insertInto('console_sign_in_links')
      .values({ token_hash: sha256(token), admin_id: row.id, created_at: nowIso, expires_at: expiresAt, used_at: null })
      .execute();
    return { admin: toAdmin(row), token, expiresAt, created: !existing, ssoOnly };
  });
}

/** An admin inviting another: the same one-time link, with the inviting admin as actor. */
export function inviteAdmin(db: Kysely<DB>, input: CreateAdminLinkInput): Promise<AdminLink> {
  return createAdminLink(db, input);
}

export type LinkState = { ok: true; admin: Admin; breakGlass: boolean } | { ok: false; reason: string };

/** Whether an address belongs to an email domain (lower case, as both are stored). */
export function inDomain(email: string, domain: string): boolean {
  return email.slice(email.lastIndexOf('@') + 1) === domain;
}

/** Why an ordinary link opens nothing while password sign-in is off. */
export const SSO_ONLY_LINK =
  'Your workspace signs in with single sign-on only: password sign-in is switched off, so this link cannot sign you in or set a password. Sign in with single sign-on instead.';

const LINK_REFUSALS = {
  unknown: 'This sign-in link is not valid. Check that the whole link was copied, or ask an admin for a new one.',
  used: 'This sign-in link has already been used; each link works once. Sign in with your password, or ask an admin for a new link.',
  expired: 'This sign-in link has expired (links are valid for 24 hours). Ask an admin for a new one.',
} as const;

async function linkRow(db: Kysely<DB>, token: string) {
  return db
    .selectFrom('console_sign_in_links as l')
    .innerJoin('console_admins as a', 'a.id', 'l.admin_id')
    .selectAll('a')
    .select(['l.token_hash', 'l.expires_at', 'l.used_at', 'l.break_glass'])
    .where('l.token_hash', '=', sha256(token))
    .executeTakeFirst();
}

/** Whether a link can still be used (for showing the set-password form); changes nothing. */
export async function checkLink(db: Kysely<DB>, token: string, now: number): Promise<LinkState> {
  const row = await linkRow(db, token);
  if (!row || row.removed_at) return { ok: false, reason: LINK_REFUSALS.unknown };
  if (row.used_at) return { ok: false, reason: LINK_REFUSALS.used };
  if (Date.parse(row.expires_at) <= now) return { ok: false, reason: LINK_REFUSALS.expired };
  return { ok: true, admin: toAdmin(row), breakGlass: row.break_glass === 1 };
}

export interface NewSession {
  /** The cookie value; only its SHA-256 is stored. */
  token: string;
  id: string;
  csrfToken: string;
}

/**
 * Uses a link once: sets the password, ends the admin's other sessions and starts a new one,
 * all in one transaction. An expired, used or unknown link is refused and changes nothing.
 */
export async function redeemLink(
  db: Kysely<DB>,
  token: string,
  password: string,
  now: number,
): Promise<{ admin: Admin; session: NewSession; secondFactorPending: boolean }> {
  checkPassword(password);
  const state = await checkLink(db, token, now);
  if (!state.ok) throw new AppError('invalid_request', state.reason);
  if (state.breakGlass) throw new AppError('invalid_request', 'A break-glass link signs in without a password; it sets none.');
  const passwordHash = await hashPassword(password);
  const nowIso = new Date(now).toISOString();
  return db.transaction().execute(async (trx) => {
    // Read in the transaction: a link followed as password sign-in is switched off sets nothing.
    if (!(await signInRules(trx, state.admin.workspace_id)).passwordSignIn) throw new AppError('invalid_state', SSO_ONLY_LINK);
    if (!(await claimLink(trx, token, nowIso, { breakGlass: false }))) throw new AppError('invalid_request', LINK_REFUSALS.used);
    await trx.updateTable('console_admins').set({ password_hash: passwordHash }).where('id', '=', state.admin.id).execute();
    await trx.deleteFrom('console_sessions').where('admin_id', '=', state.admin.id).execute();
    // A new link replaces the password, never the second factor: an admin who has one still gives it.
    const factor = await trx
      .selectFrom('admin_totp')
      .select('admin_id')
      .where('admin_id', '=', state.admin.id)
      .union(trx.selectFrom('admin_passkeys').select('admin_id').where('admin_id', '=', state.admin.id))
      .executeTakeFirst();
    const session = await createSession(trx, state.admin.id, now, { secondFactorPending: factor !== undefined });
    return { admin: { ...state.admin, password_set: true }, session, secondFactorPending: factor !== undefined };
  });
}

/** Sets a new password for an admin and ends their sessions. */
export async function setPassword(db: Kysely<DB>, adminId: string, password: string): Promise<void> {
  checkPassword(password);
  const passwordHash = await hashPassword(password);
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('console_admins')
      .set({ password_hash: passwordHash })
      .where('id', '=', adminId)
      .where('removed_at', 'is', null)
      .execute();
    await trx.deleteFrom('console_sessions').where('admin_id', '=', adminId).execute();
  });
}

/**
 * The admin whose email and password these are, or undefined. scrypt runs whether or not the
 * address is known (or has a password yet), so the answer's timing does not tell.
 */
export async function verifyPassword(db: Kysely<DB>, email: string, password: string): Promise<Admin | undefined> {
  const normalized = email.trim().toLowerCase();
  // An address may administer several workspaces, each with its own password: the one whose
  // password this is, the most recently used first when several share it.
  const rows = await db
    .selectFrom('console_admins')
    .selectAll()
    .where('email', '=', normalized)
    .where('removed_at', 'is', null)
    .orderBy(sql`coalesce(last_sign_in_at, '')`, 'desc')
    .orderBy('created_at', 'desc')
    .limit(MAX_WORKSPACES_PER_ADDRESS)
    .execute();
  if (rows.length === 0) {
    await passwordMatches(password, null);
    return undefined;
  }
  for (const row of rows) if (await passwordMatches(password, row.password_hash)) return toAdmin(row);
  return undefined;
}

/** Workspaces whose passwords one sign-in tries (each costs a scrypt). */
export const MAX_WORKSPACES_PER_ADDRESS = 10;

/** A session waiting for the second factor lasts this long: enough to open an app or find a code. */
export const PENDING_SESSION_MS = 10 * 60_000;

/**
 * Starts a session with a fresh id (never reusing one from before sign-in). With
 * `secondFactorPending`, the password was right but the second factor is still owed: that
 * session opens no console page, only the second-factor form.
 */
export async function createSession(
  db: Kysely<DB>,
  adminId: string,
  now: number,
  options: { secondFactorPending?: boolean } = {},
): Promise<NewSession> {
  const token = randomBase62(43);
  const csrfToken = randomBase62(43);
  const nowIso = new Date(now).toISOString();
  const id = sha256(token);
  // Sessions past their idle or absolute life are useless: drop them (a small table).
  await db
    .deleteFrom('console_sessions')
    .where((eb) =>
      eb.or([
        eb('last_seen_at', '<=', new Date(now - SESSION_IDLE_MS).toISOString()),
        eb('created_at', '<=', new Date(now - SESSION_ABSOLUTE_MS).toISOString()),
      ]),
    )
    .execute();
  await db
    .insertInto('console_sessions')
    .values({
      id,
      admin_id: adminId,
      csrf_token: csrfToken,
      created_at: nowIso,
      last_seen_at: nowIso,
      second_factor_pending: options.secondFactorPending ? 1 : 0,
    })
    .execute();
  if (!options.secondFactorPending) {
    await db.updateTable('console_admins').set({ last_sign_in_at: nowIso }).where('id', '=', adminId).execute();
  }
  return { token, id, csrfToken };
}

export interface LoadedSession {
  /** `secondFactorPending`: the password was right, the second factor not given yet. */
  session: { id: string; csrfToken: string; secondFactorPending: boolean };
  /** `mustEnrol`: the workspace requires a second factor and this admin has none yet. */
  admin: { id: string; email: string; workspaceId: string; workspaceName: string; mustEnrol: boolean };
}

/** The session of a cookie value, if it exists, its admin is active and neither expiry has passed. */
export async function loadSession(db: Kysely<DB>, token: string, now: number): Promise<LoadedSession | undefined> {
  if (!/^[0-9A-Za-z]{43}$/.test(token)) return undefined;
  const id = sha256(token);
  const row = await db
    .selectFrom('console_sessions as s')
    .innerJoin('console_admins as a', 'a.id', 's.admin_id')
    .innerJoin('workspaces as w', 'w.id', 'a.workspace_id')
    .select([
      's.id',
      's.csrf_token',
      's.created_at',
      's.last_seen_at',
      'a.id as admin_id',
      'a.email',
      'a.removed_at',
      'w.id as workspace_id',
      'w.name',
      's.second_factor_pending',
      (eb) =>
        eb
          .selectFrom('workspace_sign_in as r')
          .select('r.require_second_factor')
          .whereRef('r.workspace_id', '=', 'a.workspace_id')
          .as('require_second_factor'),
      (eb) =>
        eb
          .or([
            eb.exists(eb.selectFrom('admin_totp as t').select('t.admin_id').whereRef('t.admin_id', '=', 'a.id')),
            eb.exists(eb.selectFrom('admin_passkeys as p').select('p.admin_id').whereRef('p.admin_id', '=', 'a.id')),
          ])
          .as('has_factor'),
    ])
    .where('s.id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  const lastSeen = Date.parse(row.last_seen_at);
  const pending = row.second_factor_pending === 1;
  if (
    row.removed_at ||
    now - lastSeen >= SESSION_IDLE_MS ||
    now - Date.parse(row.created_at) >= (pending ? PENDING_SESSION_MS : SESSION_ABSOLUTE_MS)
  ) {
    await db.deleteFrom('console_sessions').where('id', '=', id).execute();
    return undefined;
  }
  if (now - lastSeen >= SESSION_TOUCH_MS) {
    await db
      .updateTable('console_sessions')
      .set({ last_seen_at: new Date(now).toISOString() })
      .where('id', '=', id)
      .execute();
  }
  return {
    session: { id: row.id, csrfToken: row.csrf_token, secondFactorPending: pending },
    admin: {
      id: row.admin_id,
      email: row.email,
      workspaceId: row.workspace_id,
      workspaceName: row.name,
      // PostgreSQL answers the OR of EXISTS as a boolean, SQLite as 0 or 1.
      mustEnrol: Number(row.require_second_factor ?? 0) === 1 && !row.has_factor,
    },
  };
}

/** Ends a session by its id (the hash of the cookie value). */
export async function endSession(db: Kysely<DB>, sessionId: string): Promise<void> {
  await db.deleteFrom('console_sessions').where('id', '=', sessionId).execute();
}

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
  dialect: Dialect;
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
export async function removeAdmin(db: Kysely<DB>, input: RemoveAdminInput): Promise<Admin> {
  const nowIso = new Date(input.now).toISOString();
  const ref = input.admin.trim();
  return db.transaction().execute(async (trx) => {
    await lockWorkspace(trx, input.dialect, input.workspaceId);
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

/** Where an admin of a workspace signs in through its single sign-on. */
export function ssoSignInUrl(baseUrl: string, workspaceId: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/console/sso/${workspaceId}`;
}

/** The link a person follows: `<base>/console/link/<token>`. */
export function signInUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/console/link/${token}`;
}
