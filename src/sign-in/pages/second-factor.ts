/**
 * The second step of sign-in for an admin with a second factor: after a right password the
 * session is "pending" (it opens no page) until a code of the authenticator app, a recovery
 * code or a passkey is given here. Then the pending session ends and a new one starts (a new
 * cookie: nothing from before the second factor is reused).
 *
 * Wrong codes, wrong recovery codes and refused passkey answers are throttled by the one
 * failure throttle like passwords (sign-in-throttle.ts): per (admin, address), per address,
 * and per admin only from addresses the admin never completed a sign-in from. A passkey answer is checked by
 * webauthn.ts (single-use challenge of this pending session, this console's origin, signature,
 * counter).
 */

import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { recordAudit } from '../../audit/audit.js';
import type { ConsoleServices } from '../../console-kit/context.js';
import { type FieldErrors, formError, formValue, textField } from '../../console-kit/forms.js';
import { type Html, html } from '../../console-kit/html.js';
import { bareLayout, sendHtml } from '../../console-kit/layout.js';
import { addressBucket } from '../../guards/rate-limit.js';
import { JSON_TYPE } from '../../media-types.js';
import { clearSessionCookie, currentSession, SECOND_FACTOR_PATH, safeNext, setSessionCookie } from '../console-session.js';
import { listPasskeys, type PasskeyRow } from '../passkeys.js';
import { checkTotp, factorSummary, useRecoveryCode } from '../second-factor.js';
import { createSession, endSession, type LoadedSession } from '../sessions.js';
import { rememberSignedInAddress, secondFactorBudgets } from '../sign-in-throttle.js';
import { assertionOptions, PasskeyRefusal, verifyAssertion } from '../webauthn.js';

const NEEDS_SCRIPT =
  'Using a passkey needs JavaScript in this browser (the page asks your device for it). Turn JavaScript on for this console, or type a code below.';

function form(
  loaded: LoadedSession,
  values: { next: string; passkeys: boolean; totp: boolean },
  errors?: FieldErrors,
  passkeyErrors?: FieldErrors,
): Html {
  const passkey = values.passkeys
    ? html`<form method="post" action="${SECOND_FACTOR_PATH}" class="stack" data-passkey="get" data-passkey-options="${SECOND_FACTOR_PATH}/passkey/options">
  ${formError(passkeyErrors)}
  <input type="hidden" name="_csrf" value="${loaded.session.csrfToken}">
  <input type="hidden" name="next" value="${values.next}">
  <input type="hidden" name="response" value="">
  <button type="submit" class="button primary">Use a passkey</button>
  <p class="hint" data-passkey-status role="status" aria-live="polite"></p>
</form>
<p class="or">or</p>`
    : '';
  return bareLayout(
    'Second factor',
    html`<div class="card stack">
<p class="lead">Signing in as <strong>${loaded.admin.email}</strong>. Give your second factor to finish.</p>
${passkey}
<form method="post" action="${SECOND_FACTOR_PATH}" class="stack" novalidate>
  ${formError(errors)}
  <input type="hidden" name="_csrf" value="${loaded.session.csrfToken}">
  <input type="hidden" name="next" value="${values.next}">
  ${textField({
    name: 'code',
    label: values.totp ? 'Code from your authenticator app, or a recovery code' : 'Recovery code',
    hint: values.totp
      ? 'Six digits from the app (a new code every 30 seconds). Lost your phone? Type one of your recovery codes (like abcde-fghjk) instead.'
      : 'One of the recovery codes you saved (like abcde-fghjk); each works once.',
    errors,
    required: true,
    attrs: html`autocomplete="one-time-code" inputmode="${values.totp ? 'numeric' : 'text'}" autofocus spellcheck="false"`,
  })}
  <button type="submit" class="button${values.passkeys ? '' : ' primary'}">Continue</button>
</form>
<form method="post" action="${SECOND_FACTOR_PATH}/cancel">
  <input type="hidden" name="_csrf" value="${loaded.session.csrfToken}">
  <button type="submit" class="link">Cancel and sign in as someone else</button>
</form>
</div>`,
  );
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** The pending session of the request, with its CSRF token checked on a POST; otherwise undefined. */
export async function pendingSession(services: ConsoleServices, request: FastifyRequest): Promise<LoadedSession | undefined> {
  const loaded = await currentSession(services, request);
  if (!loaded?.session.secondFactorPending) return undefined;
  if (request.method === 'POST') {
    const given = formValue(request.body, '_csrf') || String(request.headers['x-csrf-token'] ?? '');
    if (!given || !timingSafeEqual(digest(given), digest(loaded.session.csrfToken))) return undefined;
  }
  return loaded;
}

/** Ends the pending session and starts the real one (the cookie changes); `address` becomes known to the second step. */
async function completeSignIn(
  services: ConsoleServices,
  reply: FastifyReply,
  loaded: LoadedSession,
  address: string,
  now: number,
): Promise<void> {
  await endSession(services.database.db, loaded.session.id);
  const session = await createSession(services.database.db, loaded.admin.id, now);
  await rememberSignedInAddress(services.failureThrottle, loaded.admin.id, address, now);
  setSessionCookie(reply, services, session);
}

export function registerSecondFactorPages(scope: FastifyInstance, services: ConsoleServices): void {
  const throttle = services.failureThrottle;

  scope.get(SECOND_FACTOR_PATH.slice('/console'.length), async (request, reply) => {
    const next = safeNext((request.query as Record<string, string | undefined>).next);
    const loaded = await pendingSession(services, request);
    if (!loaded) return reply.redirect(`/console/sign-in?next=${encodeURIComponent(next)}`, 303);
    const summary = await factorSummary(services.database.db, loaded.admin.id);
    reply.header('cache-control', 'no-store');
    return sendHtml(reply, form(loaded, { next, totp: summary.totp, passkeys: summary.passkeys > 0 }));
  });

  scope.post(`${SECOND_FACTOR_PATH.slice('/console'.length)}/passkey/options`, async (request, reply) => {
    const loaded = await pendingSession(services, request);
    const send = (status: number, body: unknown) =>
      reply.code(status).header('cache-control', 'no-store').type(JSON_TYPE).send(JSON.stringify(body));
    if (!loaded) return send(401, { error: 'This sign-in is no longer open. Sign in again.' });
    const passkeys = await listPasskeys(services.database.db, loaded.admin.id);
    if (passkeys.length === 0) return send(409, { error: 'You have no passkey. Use a code instead.' });
    const ceremony = { db: services.database.db, baseUrl: services.config.baseUrl, sessionId: loaded.session.id, now: services.clock() };
    return send(200, await assertionOptions(ceremony, 'sign-in', passkeys));
  });

  scope.post(SECOND_FACTOR_PATH.slice('/console'.length), async (request, reply) => {
    const next = safeNext(formValue(request.body, 'next'));
    const loaded = await pendingSession(services, request);
    if (!loaded) return reply.redirect(`/console/sign-in?next=${encodeURIComponent(next)}`, 303);
    const db = services.database.db;
    const summary = await factorSummary(db, loaded.admin.id);
    const values = { next, totp: summary.totp, passkeys: summary.passkeys > 0 };
    // The passkey form sends `response` (filled by console.js); the code form sends `code`.
    const byPasskey = (request.body as Record<string, unknown> | undefined)?.response !== undefined;
    const response = formValue(request.body, 'response');
    const code = formValue(request.body, 'code').trim();
    if (byPasskey && !response) return sendHtml(reply, form(loaded, values, undefined, { _form: NEEDS_SCRIPT }), 400);
    if (!byPasskey && !code) return sendHtml(reply, form(loaded, values, { code: 'Enter the code.' }), 400);
    const now = services.clock();
    const address = addressBucket(request.ip);
    const budgets = await secondFactorBudgets(throttle, loaded.admin.id, address, now);
    const gate = await throttle.reserve(budgets, now);
    if (!gate.allowed) {
      reply.header('retry-after', String(gate.retryAfter));
      const wait = Math.ceil(gate.retryAfter / 60);
      const paused = {
        _form: `Too many wrong codes or refused passkeys. For your security, sign-in is paused: try again in ${wait <= 1 ? 'about a minute' : `${wait} minutes`}.`,
      };
      return sendHtml(reply, byPasskey ? form(loaded, values, undefined, paused) : form(loaded, values, paused), 429);
    }
    const actor = `console:${loaded.admin.email}`;
    if (byPasskey) {
      // A refused answer keeps the failure reserved above: refusals are throttled like wrong codes.
      const ceremony = { db, baseUrl: services.config.baseUrl, sessionId: loaded.session.id, now };
      let used: PasskeyRow;
      try {
        used = await verifyAssertion(ceremony, loaded.admin.id, 'sign-in', response);
      } catch (err) {
        if (err instanceof PasskeyRefusal) return sendHtml(reply, form(loaded, values, undefined, { _form: err.message }), 401);
        throw err;
      }
      await throttle.release(budgets, now);
      await recordAudit(db, {
        workspaceId: loaded.admin.workspaceId,
        at: new Date(now).toISOString(),
        actor,
        action: 'admin.passkey_used',
        target: loaded.admin.id,
        detail: { name: used.name },
      });
      await completeSignIn(services, reply, loaded, address, now);
      return reply.redirect(next, 303);
    }
    // A six-digit code is the app's; anything else is tried as a recovery code.
    const isTotp = /^\d{3}\s?\d{3}$/.test(code);
    const outcome = isTotp
      ? await checkTotp(db, services.secretBox, loaded.admin.id, code, now)
      : (await useRecoveryCode(db, loaded.admin.id, code, now))
        ? 'ok'
        : 'wrong';
    if (outcome === 'replayed') {
      return sendHtml(
        reply,
        form(loaded, values, { code: 'That code was already used. Wait for the next code in your app (a new one every 30 seconds).' }),
        401,
      );
    }
    if (outcome === 'wrong') {
      const text = isTotp
        ? 'That code is not right. Check the app shows wsops with your address, and that your phone’s clock is set automatically.'
        : 'That is not one of your unused recovery codes. Check it, or use a code from your authenticator app.';
      return sendHtml(reply, form(loaded, values, { code: text }), 401);
    }
    await throttle.release(budgets, now);
    if (!isTotp) {
      await recordAudit(db, {
        workspaceId: loaded.admin.workspaceId,
        at: new Date(now).toISOString(),
        actor,
        action: 'admin.recovery_code_used',
        target: loaded.admin.id,
        detail: { left: summary.recoveryCodesLeft - 1 },
      });
    }
    await completeSignIn(services, reply, loaded, address, now);
    return reply.redirect(next, 303);
  });

  scope.post(`${SECOND_FACTOR_PATH.slice('/console'.length)}/cancel`, async (request, reply) => {
    const loaded = await pendingSession(services, request);
    if (loaded) await endSession(services.database.db, loaded.session.id);
    clearSessionCookie(reply, services);
    return reply.redirect('/console/sign-in', 303);
  });
}
