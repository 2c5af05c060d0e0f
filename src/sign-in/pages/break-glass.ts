/**
 * The pages of a sign-in link while single sign-on is the only way in: an ordinary link (an
 * invitation or a new link for a forgotten password) opens nothing and points to single
 * sign-on; a break-glass link (src/sign-in/break-glass.ts) asks the admin to confirm, then signs
 * them in once.
 */
import type { FastifyReply } from 'fastify';
import type { ConsoleServices } from '../../console-kit/context.js';
import { type Html, html } from '../../console-kit/html.js';
import { bareLayout, messagePage, sendHtml } from '../../console-kit/layout.js';
import { AppError } from '../../errors.js';
import { redeemBreakGlassLink } from '../break-glass.js';
import { SECOND_FACTOR_PATH, setSessionCookie } from '../console-session.js';
import { SSO_ONLY_LINK } from '../sign-in-links.js';

/** 403: the link is left as it is; the person is sent to the workspace's single sign-on. */
export function sendSsoOnlyLink(reply: FastifyReply, workspaceId: string): FastifyReply {
  return sendHtml(
    reply,
    messagePage('Sign in with single sign-on', SSO_ONLY_LINK, {
      href: `/console/sso/${workspaceId}`,
      label: 'Sign in with single sign-on',
    }),
    403,
  );
}

export function breakGlassForm(token: string, email: string): Html {
  return bareLayout(
    'Emergency sign-in',
    html`<form method="post" action="/console/link/${token}" class="card stack">
  <p class="lead">This is a break-glass link for <strong>${email}</strong>, issued by your operator because single sign-on cannot be used.</p>
  <p>It signs you in once, without single sign-on and without a password, and is recorded in the workspace's audit trail. It sets no password: the next time, sign in with single sign-on again.</p>
  <button type="submit" class="button primary">Sign in once</button>
</form>`,
  );
}

export async function followBreakGlassLink(services: ConsoleServices, reply: FastifyReply, token: string): Promise<FastifyReply> {
  try {
    const { session, secondFactorPending } = await redeemBreakGlassLink(services.database.db, token, services.clock());
    setSessionCookie(reply, services, session);
    return reply.redirect(secondFactorPending ? SECOND_FACTOR_PATH : '/console', 303);
  } catch (err) {
    if (err instanceof AppError) {
      return sendHtml(
        reply,
        messagePage('Sign-in link not usable', err.message, { href: '/console/sign-in', label: 'Go to sign-in' }),
        410,
      );
    }
    throw err;
  }
}
