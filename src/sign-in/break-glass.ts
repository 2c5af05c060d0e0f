/**
 * Break-glass sign-in: when the identity provider cannot be used (down, misconfigured) and
 * password sign-in is off, an operator with access to the server issues a one-time link for
 * one existing admin (`wsops admin break-glass`). It signs that admin in once without a
 * password and without single sign-on, sets no password, and leaves password sign-in off for
 * everyone else. Issuing and using it are both in the workspace's audit trail, with the
 * operator's reason. The admin's second factor, if they have one, is still asked for.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from '#kysely';
import { recordAudit } from '../audit/audit.js';
import { AppError } from '../errors.js';
import { randomBase62 } from '../ids.js';
import type { DB } from '../store/schema.js';
import type { Admin } from './admin-rows.js';
import { factorSummary, hasSecondFactor } from './second-factor.js';
import { createSession, type NewSession } from './sessions.js';
import { checkLink, claimLink } from './sign-in-links.js';

/** A break-glass link lives one hour: long enough to pass on, short for a way around SSO. */
export const BREAK_GLASS_LIFE_MS = 3_600_000;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export interface BreakGlassLink {
  adminId: string;
  email: string;
  token: string;
  expiresAt: string;
}

export async function issueBreakGlassLink(
  db: Kysely<DB>,
  input: { workspaceId: string; email: string; reason: string; actor: string; now: number },
): Promise<BreakGlassLink> {
  const reason = input.reason.trim();
  if (!reason) {
    throw new AppError('invalid_parameter', '--reason is required: say why single sign-on cannot be used (it is kept in the audit trail)', {
      param: 'reason',
    });
  }
  const email = input.email.trim().toLowerCase();
  const nowIso = new Date(input.now).toISOString();
  const token = randomBase62(43);
  const expiresAt = new Date(input.now + BREAK_GLASS_LIFE_MS).toISOString();
  return db.transaction().execute(async (trx) => {
    const admin = await trx
      .selectFrom('console_admins')
      .select(['id', 'email'])
      .where('workspace_id', '=', input.workspaceId)
      .where('email', '=', email)
      .where('removed_at', 'is', null)
      .executeTakeFirst();
    if (!admin) {
      throw new AppError(
        'not_found',
        `${email} is not an admin of workspace ${input.workspaceId}; a break-glass link is only for an existing admin (wsops admin list shows them)`,
        { param: 'email' },
      );
    }
    await trx
      .insertInto('console_sign_in_links')
      .values({ token_hash: sha256(token), admin_id: admin.id, created_at: nowIso, expires_at: expiresAt, used_at: null, break_glass: 1 })
      .execute();
    await recordAudit(trx, {
      workspaceId: input.workspaceId,
      at: nowIso,
      actor: input.actor,
      action: 'admin.break_glass_issued',
      target: admin.id,
      detail: { email: admin.email, reason: reason.slice(0, 500), expires_at: expiresAt },
    });
    return { adminId: admin.id, email: admin.email, token, expiresAt };
  });
}

/** Uses a break-glass link once: a session for its admin (pending their second factor, if any). */
export async function redeemBreakGlassLink(
  db: Kysely<DB>,
  token: string,
  now: number,
): Promise<{ admin: Admin; session: NewSession; secondFactorPending: boolean }> {
  const state = await checkLink(db, token, now);
  if (!state.ok) throw new AppError('invalid_request', state.reason);
  if (!state.breakGlass) throw new AppError('invalid_request', 'This is not a break-glass link.');
  const nowIso = new Date(now).toISOString();
  const pending = hasSecondFactor(await factorSummary(db, state.admin.id));
  return db.transaction().execute(async (trx) => {
    if (!(await claimLink(trx, token, nowIso, { breakGlass: true }))) {
      throw new AppError('invalid_request', 'This sign-in link has already been used; each link works once.');
    }
    const session = await createSession(trx, state.admin.id, now, { secondFactorPending: pending });
    await recordAudit(trx, {
      workspaceId: state.admin.workspace_id,
      at: nowIso,
      actor: `console:${state.admin.email}`,
      action: 'admin.break_glass_used',
      target: state.admin.id,
      detail: { email: state.admin.email },
    });
    return { admin: state.admin, session, secondFactorPending: pending };
  });
}
