/**
 * Sign-in (email and password), the one-time link where an admin chooses a password, and
 * sign-out. Wrong passwords are throttled (failure-throttle.ts, by the budgets of
 * sign-in-throttle.ts), a failure reserved before the password hash runs, so concurrent
 * guesses cannot overshoot. Emails are not secrets; this needs none to be.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ConsoleServices } from '../../console-kit/context.js';
import { type FieldErrors, formError, formValue, textField } from '../../console-kit/forms.js';
import { type Html, html } from '../../console-kit/html.js';
import { bareLayout, messagePage, sendHtml } from '../../console-kit/layout.js';
import { AppError } from '../../errors.js';
import { addressBucket } from '../../guards/rate-limit.js';
import {
  clearSessionCookie,
  currentSession,
  requireCsrf,
  requireSession,
  SECOND_FACTOR_PATH,
  safeNext,
  setSessionCookie,
} from '../console-session.js';
import { MIN_PASSWORD_LENGTH, verifyPassword } from '../passwords.js';
import { factorSummary, hasSecondFactor } from '../second-factor.js';
import { createSession, endSession } from '../sessions.js';
import { checkLink, redeemLink } from '../sign-in-links.js';
import { signInRules } from '../sign-in-rules.js';
import { passwordBudgets, rememberPasswordAddress, rememberSignedInAddress } from '../sign-in-throttle.js';
import { breakGlassForm, followBreakGlassLink, sendSsoOnlyLink } from './break-glass.js';

function signInForm(values: { email: string; next: string }, errors?: FieldErrors, ssoWorkspace?: string): Html {
  return bareLayout(
    'Sign in',
    html`<form method="post" action="/console/sign-in" class="card stack" novalidate>
  <p class="lead">Sign in to manage your workspace's API keys, webhooks, modules and admins.</p>
  ${formError(errors)}
  <input type="hidden" name="next" value="${values.next}">
  ${textField({ name: 'email', label: 'Email', type: 'email', value: values.email, errors, required: true, attrs: html`autocomplete="username" autofocus` })}
  ${textField({ name: 'password', label: 'Password', type: 'password', errors, required: true, attrs: html`autocomplete="current-password"` })}
  <button type="submit" class="button primary">Sign in</button>
  ${ssoWorkspace ? html`<p><a class="button" href="/console/sso/${ssoWorkspace}">Sign in with single sign-on</a></p>` : ''}
  <p class="hint">Forgotten your password, or never set one? Ask another admin of your workspace for a new sign-in link,
  or your operator to run <code>wsops admin create</code> with your address again.</p>
</form>`,
  );
}

function passwordForm(token: string, email: string, errors?: FieldErrors): Html {
  return bareLayout(
    'Choose a password',
    html`<form method="post" action="/console/link/${token}" class="card stack" novalidate>
  <p class="lead">You are signing in as <strong>${email}</strong>. Choose a password for the next times you sign in.</p>
  ${formError(errors)}
  <input type="text" name="username" value="${email}" autocomplete="username" hidden readonly>
  ${textField({
    name: 'password',
    label: 'New password',
    type: 'password',
    hint: `At least ${MIN_PASSWORD_LENGTH} characters. A few unrelated words make a good one.`,
    errors,
    required: true,
    attrs: html`autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" autofocus`,
  })}
  ${textField({ name: 'confirm', label: 'Repeat the password', type: 'password', errors, required: true, attrs: html`autocomplete="new-password"` })}
  <button type="submit" class="button primary">Set password and sign in</button>
</form>`,
  );
}

function minutes(seconds: number): string {
  const m = Math.ceil(seconds / 60);
  return m <= 1 ? 'about a minute' : `${m} minutes`;
}

export function registerSignInPages(scope: FastifyInstance, services: ConsoleServices): void {
  const throttle = services.failureThrottle;

  scope.get('/sign-in', async (request, reply) => {
    const next = safeNext((request.query as Record<string, string | undefined>).next);
    if (await currentSession(services, request)) return reply.redirect(next, 303);
    return sendHtml(reply, signInForm({ email: '', next }));
  });

  scope.post('/sign-in', async (request, reply) => {
    const email = formValue(request.body, 'email').trim().toLowerCase();
    const password = formValue(request.body, 'password');
    const next = safeNext(formValue(request.body, 'next'));
    const now = services.clock();
    if (!email || !password) {
      const errors: FieldErrors = {};
      if (!email) errors.email = 'Enter the email address you were invited with.';
      if (!password) errors.password = 'Enter your password.';
      return sendHtml(reply, signInForm({ email, next }, errors), 400);
    }
    const address = addressBucket(request.ip);
    const budgets = await passwordBudgets(throttle, email, address, now);
    const gate = await throttle.reserve(budgets, now);
    if (!gate.allowed) {
      reply.header('retry-after', String(gate.retryAfter));
      return sendHtml(
        reply,
        signInForm(
          { email, next },
          { _form: `Too many wrong passwords. For your security, sign-in is paused: try again in ${minutes(gate.retryAfter)}.` },
        ),
        429,
      );
    }
    // The failure reserved above stays counted unless the password is right.
    const admin = await verifyPassword(services.database.db, email, password);
    if (!admin) {
      return sendHtml(
        reply,
        signInForm({ email, next }, { _form: 'That email and password do not match. Check both and try again.' }),
        401,
      );
    }
    await throttle.release(budgets, now);
    await rememberPasswordAddress(throttle, email, address, now);
    const rules = await signInRules(services.database.db, admin.workspace_id);
    if (!rules.passwordSignIn) {
      return sendHtml(
        reply,
        signInForm(
          { email, next },
          { _form: 'Your workspace signs in with single sign-on only; password sign-in is switched off. Use the link below.' },
          admin.workspace_id,
        ),
        403,
      );
    }
    // With a second factor, the password opens only the second step (a pending session).
    const pending = hasSecondFactor(await factorSummary(services.database.db, admin.id));
    const session = await createSession(services.database.db, admin.id, now, { secondFactorPending: pending });
    if (!pending) await rememberSignedInAddress(throttle, admin.id, address, now);
    setSessionCookie(reply, services, session);
    return reply.redirect(pending ? `${SECOND_FACTOR_PATH}?next=${encodeURIComponent(next)}` : next, 303);
  });

  scope.get('/link/:token', async (request, reply) => {
    const { token } = request.params as { token: string };
    // The token is in the URL: no other site may learn it through Referer. `same-origin`, not
    // `no-referrer`: under no-referrer Chromium sends `Origin: null` with the form, which the
    // console's same-origin check (rightly) refuses.
    reply.header('referrer-policy', 'same-origin');
    const state = await checkLink(services.database.db, token, services.clock());
    if (!state.ok) return sendHtml(reply, linkRefused(state.reason), 410);
    if (state.breakGlass) return sendHtml(reply, breakGlassForm(token, state.admin.email));
    if (!(await signInRules(services.database.db, state.admin.workspace_id)).passwordSignIn) {
      return sendSsoOnlyLink(reply, state.admin.workspace_id);
    }
    return sendHtml(reply, passwordForm(token, state.admin.email));
  });

  scope.post('/link/:token', async (request, reply) => {
    const { token } = request.params as { token: string };
    reply.header('referrer-policy', 'same-origin');
    const now = services.clock();
    const state = await checkLink(services.database.db, token, now);
    if (!state.ok) return sendHtml(reply, linkRefused(state.reason), 410);
    if (state.breakGlass) return followBreakGlassLink(services, reply, token);
    // Single sign-on only: a link sets no password and opens no session (redeemLink checks again).
    if (!(await signInRules(services.database.db, state.admin.workspace_id)).passwordSignIn) {
      return sendSsoOnlyLink(reply, state.admin.workspace_id);
    }
    const password = formValue(request.body, 'password');
    const confirm = formValue(request.body, 'confirm');
    if (password.length < MIN_PASSWORD_LENGTH) {
      return sendHtml(
        reply,
        passwordForm(token, state.admin.email, { password: `The password must be at least ${MIN_PASSWORD_LENGTH} characters long.` }),
        400,
      );
    }
    if (password !== confirm) {
      return sendHtml(
        reply,
        passwordForm(token, state.admin.email, { confirm: 'The two passwords are not the same. Type them again.' }),
        400,
      );
    }
    try {
      const { admin, session, secondFactorPending } = await redeemLink(services.database.db, token, password, now);
      const address = addressBucket(request.ip);
      await rememberPasswordAddress(throttle, admin.email, address, now);
      if (!secondFactorPending) await rememberSignedInAddress(throttle, admin.id, address, now);
      setSessionCookie(reply, services, session);
      return reply.redirect(secondFactorPending ? SECOND_FACTOR_PATH : '/console', 303);
    } catch (err) {
      if (err instanceof AppError && err.code === 'invalid_state') return sendSsoOnlyLink(reply, state.admin.workspace_id);
      if (err instanceof AppError && err.extra.param === 'password') {
        return sendHtml(reply, passwordForm(token, state.admin.email, { password: err.message }), 400);
      }
      if (err instanceof AppError) return sendHtml(reply, linkRefused(err.message), 410);
      throw err;
    }
  });

  scope.post('/sign-out', { preHandler: [requireSession(services), requireCsrf] }, async (request, reply: FastifyReply) => {
    const session = request.consoleSession;
    if (session) await endSession(services.database.db, session.id);
    clearSessionCookie(reply, services);
    return reply.redirect('/console/sign-in', 303);
  });
}

function linkRefused(reason: string): Html {
  return messagePage('Sign-in link not usable', reason, { href: '/console/sign-in', label: 'Go to sign-in' });
}
