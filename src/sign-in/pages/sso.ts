/**
 * Single sign-on routes: `/console/sso/<workspace>` starts a sign-in at the workspace's OpenID
 * provider; `/console/sso/callback` finishes it. Every refusal says what was wrong and signs
 * nobody in: a callback with a wrong state, an ID token with a wrong nonce, from another
 * issuer or expired, an address outside the workspace's domain, an unknown address when
 * admins are not created just in time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ConsoleServices } from '../../console-kit/context.js';
import { messagePage, sendHtml } from '../../console-kit/layout.js';
import { addressBucket } from '../../guards/rate-limit.js';
import { SECOND_FACTOR_PATH, safeNext, setSessionCookie } from '../console-session.js';
import { finishSso, SSO_CALLBACK_PATH, SSO_COOKIE, SSO_FLOW_MS, type SsoFlow, SsoRefusal, startSso } from '../oidc.js';
import { factorSummary, hasSecondFactor } from '../second-factor.js';
import { createSession } from '../sessions.js';
import { signInRules } from '../sign-in-rules.js';
import { rememberSignedInAddress } from '../sign-in-throttle.js';
import { ssoAdmin } from '../sso-admins.js';

const WORKSPACE_ID = /^[A-Za-z0-9_-]{1,64}$/;
const AGAIN = { href: '/console/sign-in', label: 'Back to sign-in' };

function refused(reply: FastifyReply, text: string, status = 403) {
  return sendHtml(reply, messagePage('Single sign-on refused', `${text} Nothing was signed in.`, AGAIN), status);
}

function sameText(a: string, b: string): boolean {
  const d = (t: string) => createHash('sha256').update(t).digest();
  return timingSafeEqual(d(a), d(b));
}

function readFlow(services: ConsoleServices, request: FastifyRequest): SsoFlow | undefined {
  const sealed = request.cookies[SSO_COOKIE];
  if (!sealed) return undefined;
  try {
    const flow = JSON.parse(services.secretBox.open(sealed)) as SsoFlow;
    return services.clock() - flow.startedAt < SSO_FLOW_MS ? flow : undefined;
  } catch {
    return undefined;
  }
}

export function registerSsoPages(scope: FastifyInstance, services: ConsoleServices): void {
  const db = services.database.db;
  const cookieOptions = {
    httpOnly: true,
    // Lax: the provider sends the browser back with a top-level GET, which carries it.
    sameSite: 'lax' as const,
    path: '/console/sso',
    secure: services.config.baseUrl.startsWith('https:'),
  };

  scope.get(SSO_CALLBACK_PATH.slice('/console'.length), async (request, reply) => {
    const query = request.query as Record<string, string | undefined>;
    const flow = readFlow(services, request);
    reply.clearCookie(SSO_COOKIE, cookieOptions);
    if (!flow) {
      return refused(reply, 'This sign-in was not started in this browser, or took longer than 10 minutes. Start it again.', 400);
    }
    if (!query.state || !sameText(query.state, flow.state)) {
      return refused(reply, 'The answer from the sign-in provider does not belong to this sign-in (wrong state). Start it again.', 400);
    }
    if (query.error) {
      return refused(
        reply,
        `The sign-in provider refused: ${query.error}${query.error_description ? ` (${query.error_description})` : ''}.`,
      );
    }
    const rules = await signInRules(db, flow.workspaceId);
    if (!rules.sso) return refused(reply, 'Single sign-on is no longer set up for this workspace.', 400);
    let who: Awaited<ReturnType<typeof finishSso>>;
    try {
      who = await finishSso(services, rules.sso, flow, new URL(request.url, services.config.baseUrl));
    } catch (err) {
      if (err instanceof SsoRefusal) return refused(reply, err.message);
      throw err;
    }
    const domain = who.email.slice(who.email.lastIndexOf('@') + 1);
    if (domain !== rules.sso.domain) {
      return refused(reply, `The address ${who.email} is outside ${rules.sso.domain}, the only email domain this workspace accepts.`);
    }
    if (who.emailVerified === 'unverified') {
      return refused(
        reply,
        `The sign-in provider does not say ${who.email} is verified (its email_verified claim is not true). Verify the address at the provider, or ask your IT team.`,
      );
    }
    if (who.emailVerified === 'missing' && !rules.sso.trustMissingEmailVerified) {
      return refused(
        reply,
        `The sign-in provider did not say whether ${who.email} is verified (no email_verified claim). If this provider never sends that claim, an admin can trust it: "Trust addresses without email_verified" on the sign-in security page, or wsops sso set --trust-missing-email-verified.`,
      );
    }
    const now = services.clock();
    const admin = await ssoAdmin(services.database, {
      workspaceId: flow.workspaceId,
      email: who.email,
      create: rules.sso.createAdmins,
      now,
    });
    if (!admin) return refused(reply, `${who.email} is not an admin of this workspace. Ask one of its admins to invite you.`);
    // Single sign-on is the first factor: an admin with a second factor still gives it.
    const pending = hasSecondFactor(await factorSummary(db, admin.id));
    const session = await createSession(db, admin.id, now, { secondFactorPending: pending });
    if (!pending) await rememberSignedInAddress(services.failureThrottle, admin.id, addressBucket(request.ip), now);
    setSessionCookie(reply, services, session);
    return reply.redirect(pending ? `${SECOND_FACTOR_PATH}?next=${encodeURIComponent(flow.next)}` : flow.next, 303);
  });

  scope.get('/sso/:workspace', async (request, reply) => {
    const { workspace } = request.params as { workspace: string };
    const next = safeNext((request.query as Record<string, string | undefined>).next);
    const rules = WORKSPACE_ID.test(workspace) ? await signInRules(db, workspace) : undefined;
    if (!rules?.sso) {
      return sendHtml(
        reply,
        messagePage('Single sign-on not set up', 'This workspace has no single sign-on. Sign in with your email and password.', AGAIN),
        404,
      );
    }
    let started: Awaited<ReturnType<typeof startSso>>;
    try {
      started = await startSso(services, workspace, rules.sso, next);
    } catch (err) {
      request.log.warn({ err, issuer: rules.sso.issuer }, 'sso discovery failed');
      return sendHtml(
        reply,
        messagePage(
          'Sign-in provider unreachable',
          `The sign-in provider ${rules.sso.issuer} could not be reached or did not describe itself (OpenID discovery). Try again later, or ask your operator.`,
          AGAIN,
        ),
        502,
      );
    }
    reply.setCookie(SSO_COOKIE, services.secretBox.seal(JSON.stringify(started.flow)), {
      ...cookieOptions,
      maxAge: SSO_FLOW_MS / 1000,
    });
    return reply.header('cache-control', 'no-store').redirect(started.url, 303);
  });
}
