/**
 * One-time sign-in links (invitations, password resets, break-glass): random 256-bit tokens
 * stored only as SHA-256 hashes, so a database dump opens nothing; each is used at most once.
 */
import type { Kysely } from '#kysely';
import { recordAudit } from '../audit/audit.js';
import { AppError } from '../errors.js';
import { newId, randomBase62 } from '../ids.js';
import type { DB } from '../store/schema.js';
import { type LockingDatabase, lockWorkspace } from '../workspaces/workspaces.js';
import { type Admin, normalizeEmail, sha256, toAdmin } from './admin-rows.js';
import { checkPassword, hashPassword } from './passwords.js';
import { createSession, type NewSession } from './sessions.js';
import { signInRules } from './sign-in-rules.js';

export const LINK_LIFE_MS = 24 * 3_600_000;

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

/** Ends every sign-in link of an admin not used yet (a new link replaces them; removal ends them). */
export async function voidOpenLinks(trx: Kysely<DB>, adminId: string, nowIso: string): Promise<void> {
  await trx
    .updateTable('console_sign_in_links')
    .set({ used_at: nowIso })
    .where('admin_id', '=', adminId)
    .where('used_at', 'is', null)
    .execute();
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
}

/**
 * Adds an admin with a one-time sign-in link, or, for an address that is already an admin of
 * this workspace, issues a new link (the "forgotten password" path). Earlier unused links of
 * that admin stop working.
 */
export async function createAdminLink(database: LockingDatabase, input: CreateAdminLinkInput): Promise<AdminLink> {
  const email = normalizeEmail(input.email);
  const nowIso = new Date(input.now).toISOString();
  const token = randomBase62(43);
  const expiresAt = new Date(input.now + LINK_LIFE_MS).toISOString();
  return database.db.transaction().execute(async (trx) => {
    await lockWorkspace(trx, database.engine, input.workspaceId);
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
export function inviteAdmin(database: LockingDatabase, input: CreateAdminLinkInput): Promise<AdminLink> {
  return createAdminLink(database, input);
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

/** Where an admin of a workspace signs in through its single sign-on. */
export function ssoSignInUrl(baseUrl: string, workspaceId: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/console/sso/${workspaceId}`;
}

/** The link a person follows: `<base>/console/link/<token>`. */
export function signInUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/console/link/${token}`;
}
