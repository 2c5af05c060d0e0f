/**
 * Sign-in security: the signed-in admin's own second factor (authenticator app, recovery
 * codes, passkeys) and the workspace's sign-in rules (require a second factor for every admin;
 * single sign-on, set up here or with `wsops sso set`: sso-settings.ts).
 *
 * Enrolment of the app is stateless until confirmed: the new secret travels in the form sealed
 * with the secret box and bound to this admin, and is stored only once a code from the app
 * proves it was copied right.
 */
import type { FastifyInstance } from 'fastify';
import type { ConsoleServices, NavEntry } from '../../console-kit/context.js';
import { type PageContext, pageContext } from '../../console-kit/context.js';
import { type FieldErrors, formError, formValue, textField } from '../../console-kit/forms.js';
import { type Html, html } from '../../console-kit/html.js';
import { badge, csrfField, formatTime, layout, sendHtml } from '../../console-kit/layout.js';
import { listPasskeys } from '../passkeys.js';
import {
  checkTotp,
  disableTotp,
  enrolTotp,
  factorSummary,
  hasSecondFactor,
  newTotpSecret,
  replaceRecoveryCodes,
} from '../second-factor.js';
import { setRequireSecondFactor, signInRules } from '../sign-in-rules.js';
import { passkeySection } from './passkeys.js';
import { type SsoFormValues, ssoSection } from './sso-settings.js';
import { totpQrCode } from './totp-qr.js';

/** This page's entry in the console's main navigation. */
export const SECURITY_NAV: NavEntry = { key: 'security', label: 'Sign-in security', href: '/console/security' };

export interface SecurityPageOptions {
  notice?: { kind: 'success' | 'error' | 'info'; text: string };
  /** A secret being set up: shown with its confirmation form. */
  enrolling?: { secret: string; uri: string; sealed: string; errors?: FieldErrors };
  recoveryCodes?: string[];
  totpErrors?: FieldErrors;
  requireErrors?: FieldErrors;
  /** The passkey form as typed, with its refusal. */
  passkeyForm?: { name: string; errors: FieldErrors };
  /** The single sign-on form as typed (never the client secret), with its refusal. */
  ssoForm?: { values: SsoFormValues; errors: FieldErrors };
}

function recoveryCard(codes: string[]): Html {
  return html`<section class="card secret-card" aria-labelledby="recovery-new">
<h2 id="recovery-new">Your recovery codes</h2>
<p class="warning" role="alert"><strong>Save these now; they are shown only once.</strong> Each code signs you in once
if you lose your phone or passkey. Keep them somewhere safe, apart from your password.</p>
<ul class="recovery-codes" aria-label="Recovery codes">${codes.map((c) => html`<li><code>${c}</code></li>`)}</ul>
</section>`;
}

function totpSection(ctx: PageContext, on: boolean, created: string | undefined, options: SecurityPageOptions): Html {
  if (options.enrolling) {
    const e = options.enrolling;
    return html`<section class="card stack" aria-labelledby="totp">
<h2 id="totp">Set up an authenticator app</h2>
<ol class="steps">
  <li>In your authenticator app (Google Authenticator, 1Password, Authy…), add an account by scanning this QR code, or by entering the key beside it:
    <div class="totp-setup">
    ${totpQrCode(e.uri)}
    <div class="secret">
      <label for="totp-secret" class="visually-hidden">Setup key</label>
      <input id="totp-secret" class="secret-value" type="text" value="${e.secret}" readonly spellcheck="false" autocomplete="off">
      <button type="button" class="button" data-copy="totp-secret">Copy</button>
    </div>
    </div>
    <p class="hint">On this device, <a href="${e.uri}">open it in an authenticator app</a> instead. Type: time-based, 6 digits, every 30 seconds.</p>
  </li>
  <li>Type the six-digit code the app shows to confirm.</li>
</ol>
<form method="post" action="/console/security/totp" class="stack" novalidate>
  ${csrfField(ctx)}
  ${formError(e.errors)}
  <input type="hidden" name="sealed" value="${e.sealed}">
  ${textField({ name: 'code', label: 'Code from the app', errors: e.errors, required: true, attrs: html`autocomplete="one-time-code" inputmode="numeric" autofocus` })}
  <div class="actions"><button type="submit" class="button primary">Turn on</button> <a class="button" href="/console/security">Cancel</a></div>
</form>
</section>`;
  }
  if (!on) {
    return html`<section class="card stack" aria-labelledby="totp">
<h2 id="totp">Authenticator app ${badge('neutral', 'Off')}</h2>
<p>After your password, sign-in asks for a six-digit code from an app on your phone.</p>
<form method="post" action="/console/security/totp/start">${csrfField(ctx)}<button type="submit" class="button primary">Set up an authenticator app</button></form>
</section>`;
  }
  return html`<section class="card stack" aria-labelledby="totp">
<h2 id="totp">Authenticator app ${badge('good', 'On')}</h2>
<p>Set up ${formatTime(created)}. Sign-in asks for a code from the app after your password.</p>
<form method="post" action="/console/security/totp/disable" class="stack" novalidate>
  ${csrfField(ctx)}
  ${formError(options.totpErrors)}
  ${textField({ name: 'code', label: 'To turn it off, type a current code from the app', errors: options.totpErrors, required: true, attrs: html`autocomplete="one-time-code" inputmode="numeric"` })}
  <div><button type="submit" class="button danger-outline">Turn off the authenticator app</button></div>
</form>
</section>`;
}

/** The security page; the passkey routes (passkey-routes.ts) render it too. */
export async function renderSecurityPage(ctx: PageContext, options: SecurityPageOptions = {}): Promise<Html> {
  const db = ctx.services.database.db;
  const [summary, rules, totpRow, passkeys] = await Promise.all([
    factorSummary(db, ctx.admin.id),
    signInRules(db, ctx.admin.workspaceId),
    db.selectFrom('admin_totp').select('created_at').where('admin_id', '=', ctx.admin.id).executeTakeFirst(),
    listPasskeys(db, ctx.admin.id),
  ]);
  const has = hasSecondFactor(summary);
  const recovery = has
    ? html`<section class="card stack" aria-labelledby="recovery">
<h2 id="recovery">Recovery codes</h2>
<p>${summary.recoveryCodesLeft === 1 ? '1 unused code left.' : `${summary.recoveryCodesLeft} unused codes left.`}
${summary.recoveryCodesLeft <= 3 ? badge('warn', 'Running low') : ''}</p>
<form method="post" action="/console/security/recovery-codes">${csrfField(ctx)}<button type="submit" class="button">Make new recovery codes</button></form>
<p class="hint">New codes replace all the old ones.</p>
</section>`
    : '';
  const requireForm = html`<form method="post" action="/console/security/require" class="stack" novalidate>
  ${csrfField(ctx)}
  ${formError(options.requireErrors)}
  <p>A second factor for every admin: ${rules.requireSecondFactor ? badge('good', 'Required') : badge('neutral', 'Optional')}.
  When required, admins without one are sent to set one up at their next page.</p>
  <input type="hidden" name="required" value="${rules.requireSecondFactor ? 'no' : 'yes'}">
  <div><button type="submit" class="button">${rules.requireSecondFactor ? 'Make it optional' : 'Require a second factor for every admin'}</button></div>
</form>`;
  return layout(ctx, {
    title: 'Sign-in security',
    nav: 'security',
    notice: options.notice,
    body: html`<p class="lead">Your own second factor, and how admins of ${ctx.admin.workspaceName} sign in.</p>
${options.recoveryCodes?.length ? recoveryCard(options.recoveryCodes) : ''}
<h2>Your second factor</h2>
${totpSection(ctx, totpRow !== undefined, totpRow?.created_at, options)}
${passkeySection(ctx, passkeys, options.passkeyForm)}
${recovery}
<section class="card stack" aria-labelledby="workspace-rules">
<h2 id="workspace-rules">Workspace sign-in</h2>
${requireForm}
${ssoSection(ctx, rules, options.ssoForm)}
</section>`,
  });
}

const ENROL_REQUIRED = {
  kind: 'info',
  text: 'Your workspace requires a second factor. Set up an authenticator app or a passkey to continue.',
} as const;

export function registerSecurityPages(scope: FastifyInstance, services: ConsoleServices): void {
  const db = services.database.db;
  /** The sealed setup secret names its admin, so one admin's form cannot enrol another's secret. */
  const sealFor = (adminId: string, secret: string) => services.secretBox.seal(`totp-setup\n${adminId}\n${secret}`);
  const openFor = (adminId: string, sealed: string): string | undefined => {
    try {
      const [kind, id, secret] = services.secretBox.open(sealed).split('\n');
      return kind === 'totp-setup' && id === adminId ? secret : undefined;
    } catch {
      return undefined;
    }
  };

  scope.get('/security', async (request, reply) => {
    const ctx = pageContext(services, request);
    const q = request.query as Record<string, string | undefined>;
    const notice = q.enrol === 'required' ? ENROL_REQUIRED : undefined;
    return sendHtml(reply, await renderSecurityPage(ctx, { notice }));
  });

  scope.post('/security/totp/start', async (request, reply) => {
    const ctx = pageContext(services, request);
    const { secret, uri } = newTotpSecret(ctx.admin.email);
    return sendHtml(reply, await renderSecurityPage(ctx, { enrolling: { secret, uri, sealed: sealFor(ctx.admin.id, secret) } }));
  });

  scope.post('/security/totp', async (request, reply) => {
    const ctx = pageContext(services, request);
    const sealed = formValue(request.body, 'sealed');
    const secret = openFor(ctx.admin.id, sealed);
    if (!secret) {
      return sendHtml(
        reply,
        await renderSecurityPage(ctx, { notice: { kind: 'error', text: 'That setup form is not valid any more. Start the setup again.' } }),
        400,
      );
    }
    const code = formValue(request.body, 'code');
    const result = await enrolTotp(db, {
      adminId: ctx.admin.id,
      workspaceId: ctx.admin.workspaceId,
      actor: ctx.actor,
      secret,
      code,
      now: services.clock(),
      box: services.secretBox,
    });
    if (!result.ok) {
      const uri = newTotpSecret(ctx.admin.email).uri.replace(/secret=[A-Z2-7]+/, `secret=${secret}`);
      const errors = {
        code: code.trim()
          ? 'That code does not match the key. Check the key was typed in full and your phone’s clock is set automatically, then try the newest code.'
          : 'Type the six-digit code the app shows.',
      };
      return sendHtml(reply, await renderSecurityPage(ctx, { enrolling: { secret, uri, sealed, errors } }), 400);
    }
    return sendHtml(
      reply,
      await renderSecurityPage(ctx, {
        notice: { kind: 'success', text: 'Authenticator app turned on. Sign-in now asks for a code from it.' },
        recoveryCodes: result.recoveryCodes,
      }),
      201,
    );
  });

  scope.post('/security/totp/disable', async (request, reply) => {
    const ctx = pageContext(services, request);
    const now = services.clock();
    const check = await checkTotp(db, services.secretBox, ctx.admin.id, formValue(request.body, 'code'), now);
    if (check !== 'ok') {
      const text =
        check === 'replayed'
          ? 'That code was already used. Wait for the next code in your app.'
          : 'That code is not right. Type the current code from the app.';
      return sendHtml(reply, await renderSecurityPage(ctx, { totpErrors: { code: text } }), 400);
    }
    const [summary, rules] = await Promise.all([factorSummary(db, ctx.admin.id), signInRules(db, ctx.admin.workspaceId)]);
    if (rules.requireSecondFactor && summary.passkeys === 0) {
      return sendHtml(
        reply,
        await renderSecurityPage(ctx, {
          totpErrors: { _form: 'Your workspace requires a second factor, and the app is your only one. Add a passkey first.' },
        }),
        409,
      );
    }
    await disableTotp(db, { adminId: ctx.admin.id, workspaceId: ctx.admin.workspaceId, actor: ctx.actor, now });
    return sendHtml(reply, await renderSecurityPage(ctx, { notice: { kind: 'success', text: 'Authenticator app turned off.' } }));
  });

  scope.post('/security/recovery-codes', async (request, reply) => {
    const ctx = pageContext(services, request);
    if (!hasSecondFactor(await factorSummary(db, ctx.admin.id))) {
      return sendHtml(reply, await renderSecurityPage(ctx, { notice: { kind: 'error', text: 'Set up a second factor first.' } }), 409);
    }
    const codes = await replaceRecoveryCodes(db, ctx.admin.id, services.clock());
    return sendHtml(
      reply,
      await renderSecurityPage(ctx, {
        notice: { kind: 'success', text: 'New recovery codes made; the old ones no longer work.' },
        recoveryCodes: codes,
      }),
      201,
    );
  });

  scope.post('/security/require', async (request, reply) => {
    const ctx = pageContext(services, request);
    const required = formValue(request.body, 'required') === 'yes';
    if (required && !hasSecondFactor(await factorSummary(db, ctx.admin.id))) {
      return sendHtml(
        reply,
        await renderSecurityPage(ctx, {
          requireErrors: { _form: 'Set up your own second factor first, so you are not the first one locked out.' },
        }),
        409,
      );
    }
    await setRequireSecondFactor(db, { workspaceId: ctx.admin.workspaceId, required, actor: ctx.actor, now: services.clock() });
    const text = required
      ? 'A second factor is now required for every admin. Admins without one are asked to set one up.'
      : 'A second factor is now optional.';
    return sendHtml(reply, await renderSecurityPage(ctx, { notice: { kind: 'success', text } }));
  });
}
