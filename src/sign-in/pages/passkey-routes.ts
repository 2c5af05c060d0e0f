/**
 * The security page's passkey routes: register one (under a name), and remove one.
 *
 * The browser asks for the ceremony's options as JSON (`.../options`, a CSRF-checked POST),
 * runs navigator.credentials, and posts the answer in the form's `response` field; the answer
 * is checked by webauthn.ts and every refusal is shown on the page, next to the form.
 *
 * Removing a passkey is a sensitive action, guarded like turning the authenticator app off:
 * the admin proves a second factor now (any of their passkeys, a code of the app, or a
 * recovery code), failures counted by the failure throttle like the sign-in step; and the last
 * factor cannot go while the workspace requires one.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ConsoleServices } from '../../console-kit/context.js';
import { type PageContext, pageContext } from '../../console-kit/context.js';
import { type FieldErrors, formValue } from '../../console-kit/forms.js';
import { sendHtml } from '../../console-kit/layout.js';
import { AppError } from '../../errors.js';
import { addressBucket } from '../../guards/rate-limit.js';
import { JSON_TYPE } from '../../media-types.js';
import { refuseUnsafeName } from '../../text-rules.js';
import { addPasskey, findPasskey, listPasskeys, type PasskeyRow, removePasskey } from '../passkeys.js';
import { checkTotp, factorSummary, useRecoveryCode } from '../second-factor.js';
import { signInRules } from '../sign-in-rules.js';
import { secondFactorBudgets } from '../sign-in-throttle.js';
import {
  assertionOptions,
  type Ceremony,
  PasskeyRefusal,
  passkeysUnavailable,
  registrationOptions,
  verifyAssertion,
  verifyRegistration,
} from '../webauthn.js';
import { PASSKEY_NAME_MAX, removePage } from './passkeys.js';
import { renderSecurityPage } from './security.js';

const NEEDS_SCRIPT =
  'Using a passkey needs JavaScript in this browser (the page asks your device for it). Turn JavaScript on for this console, or use a code instead.';

/** Why a passkey name is refused, or undefined. */
function nameProblem(name: string): string | undefined {
  if (!name) return 'Give the passkey a name, such as “Work laptop”, so you can tell your passkeys apart.';
  if (name.length > PASSKEY_NAME_MAX) return `The name is ${name.length} characters long; keep it to ${PASSKEY_NAME_MAX}.`;
  try {
    refuseUnsafeName(name, 'The name');
  } catch (err) {
    return `${(err as Error).message}.`;
  }
  return undefined;
}

export function registerPasskeyRoutes(scope: FastifyInstance, services: ConsoleServices): void {
  const db = services.database.db;
  const ceremony = (ctx: PageContext): Ceremony => ({
    db,
    baseUrl: services.config.baseUrl,
    sessionId: ctx.session.id,
    now: services.clock(),
  });
  const json = (reply: FastifyReply, status: number, body: unknown) =>
    reply.code(status).header('cache-control', 'no-store').type(JSON_TYPE).send(JSON.stringify(body));
  const ownPasskey = async (ctx: PageContext, id: string): Promise<PasskeyRow> => {
    const passkey = await findPasskey(db, ctx.admin.id, id);
    if (!passkey) throw new AppError('not_found', 'You have no passkey with that id; it may have been removed already.');
    return passkey;
  };

  scope.post('/security/passkeys/options', async (request, reply) => {
    const ctx = pageContext(services, request);
    const unavailable = passkeysUnavailable(services.config.baseUrl);
    if (unavailable) return json(reply, 409, { error: unavailable });
    return json(reply, 200, await registrationOptions(ceremony(ctx), ctx.admin, await listPasskeys(db, ctx.admin.id)));
  });

  scope.post('/security/passkeys', async (request, reply) => {
    const ctx = pageContext(services, request);
    const name = formValue(request.body, 'name').trim();
    const refuse = async (errors: FieldErrors, status = 400) =>
      sendHtml(reply, await renderSecurityPage(ctx, { passkeyForm: { name, errors } }), status);
    const problem = nameProblem(name);
    if (problem) return refuse({ name: problem });
    const response = formValue(request.body, 'response');
    if (!response) return refuse({ _form: NEEDS_SCRIPT });
    const now = services.clock();
    let passkey: Awaited<ReturnType<typeof verifyRegistration>>;
    try {
      passkey = await verifyRegistration(ceremony(ctx), response);
    } catch (err) {
      if (err instanceof PasskeyRefusal) return refuse({ _form: err.message });
      throw err;
    }
    const added = await addPasskey(db, { adminId: ctx.admin.id, workspaceId: ctx.admin.workspaceId, actor: ctx.actor, name, passkey, now });
    if (!added.ok) return refuse({ _form: 'That passkey is registered already. Use another authenticator for a second passkey.' }, 409);
    return sendHtml(
      reply,
      await renderSecurityPage(ctx, {
        notice: { kind: 'success', text: `Passkey “${name}” added. Sign-in now asks for a passkey or code after your password.` },
        recoveryCodes: added.recoveryCodes,
      }),
      201,
    );
  });

  scope.get('/security/passkeys/:id/remove', async (request, reply) => {
    const ctx = pageContext(services, request);
    const passkey = await ownPasskey(ctx, (request.params as { id: string }).id);
    const { totp } = await factorSummary(db, ctx.admin.id);
    return sendHtml(reply, removePage(ctx, passkey, { totp }));
  });

  scope.post('/security/passkeys/:id/remove/options', async (request, reply) => {
    const ctx = pageContext(services, request);
    await ownPasskey(ctx, (request.params as { id: string }).id);
    return json(reply, 200, await assertionOptions(ceremony(ctx), 'confirm', await listPasskeys(db, ctx.admin.id)));
  });

  scope.post('/security/passkeys/:id/remove', async (request, reply) => {
    const ctx = pageContext(services, request);
    const passkey = await ownPasskey(ctx, (request.params as { id: string }).id);
    const [summary, rules] = await Promise.all([factorSummary(db, ctx.admin.id), signInRules(db, ctx.admin.workspaceId)]);
    const again = (errors: FieldErrors, status = 400) => sendHtml(reply, removePage(ctx, passkey, { totp: summary.totp, errors }), status);
    if (rules.requireSecondFactor && !summary.totp && summary.passkeys === 1) {
      return again(
        {
          _form:
            'Your workspace requires a second factor, and this passkey is your only one. Add another passkey or an authenticator app first.',
        },
        409,
      );
    }
    const response = formValue(request.body, 'response');
    const code = formValue(request.body, 'code').trim();
    // The passkey form sends `response` (filled by console.js); the code form sends `code`.
    const byPasskey = (request.body as Record<string, unknown> | undefined)?.code === undefined;
    if (byPasskey && !response) return again({ _form: NEEDS_SCRIPT });
    if (!byPasskey && !code) return again({ code: 'Type a code to confirm, or use a passkey.' });
    const now = services.clock();
    const budgets = await secondFactorBudgets(services.failureThrottle, ctx.admin.id, addressBucket(request.ip), now);
    const gate = await services.failureThrottle.reserve(budgets, now);
    if (!gate.allowed) {
      reply.header('retry-after', String(gate.retryAfter));
      return again({ _form: `Too many failed confirmations. Try again in ${Math.max(1, Math.ceil(gate.retryAfter / 60))} minutes.` }, 429);
    }
    if (byPasskey) {
      try {
        await verifyAssertion(ceremony(ctx), ctx.admin.id, 'confirm', response);
      } catch (err) {
        if (err instanceof PasskeyRefusal) return again({ _form: err.message });
        throw err;
      }
    } else {
      const ok = /^\d{3}\s?\d{3}$/.test(code)
        ? (await checkTotp(db, services.secretBox, ctx.admin.id, code, now)) === 'ok'
        : await useRecoveryCode(db, ctx.admin.id, code, now);
      if (!ok)
        return again({ code: 'That code is not right: type the current code from your authenticator app, or an unused recovery code.' });
    }
    await services.failureThrottle.release(budgets, now);
    await removePasskey(db, {
      adminId: ctx.admin.id,
      workspaceId: ctx.admin.workspaceId,
      actor: ctx.actor,
      credentialId: passkey.credential_id,
      now,
    });
    return sendHtml(reply, await renderSecurityPage(ctx, { notice: { kind: 'success', text: `Passkey “${passkey.name}” removed.` } }));
  });
}
