/**
 * Setting up, changing and removing the workspace's single sign-on from the security page.
 * setSso and clearSso are the CLI's (`wsops sso set|remove`): the same checks, the same audit
 * entries; only the field names in refusals are the form's.
 */
import type { FastifyInstance } from 'fastify';
import type { ConsoleServices } from '../../console-kit/context.js';
import { pageContext } from '../../console-kit/context.js';
import { formValue } from '../../console-kit/forms.js';
import { sendHtml } from '../../console-kit/layout.js';
import { AppError } from '../../errors.js';
import { clearSso, type SsoLabels, setSso, signInRules } from '../sign-in-rules.js';
import { renderSecurityPage } from './security.js';
import type { SsoFormValues } from './sso-settings.js';

const FORM_LABELS: SsoLabels = {
  issuer: 'The issuer',
  domain: 'The email domain',
  clientId: 'The client ID',
  clientSecret: 'The client secret',
};

export function registerSsoSettingsRoutes(scope: FastifyInstance, services: ConsoleServices): void {
  const db = services.database.db;

  scope.post('/security/sso', async (request, reply) => {
    const ctx = pageContext(services, request);
    const body = request.body;
    const values: SsoFormValues = {
      issuer: formValue(body, 'issuer').trim(),
      clientId: formValue(body, 'client_id').trim(),
      domain: formValue(body, 'domain').trim(),
      createAdmins: formValue(body, 'create_admins') === 'on',
      trustMissingEmailVerified: formValue(body, 'trust_missing_email_verified') === 'on',
      passwordSignIn: formValue(body, 'password_sign_in') === 'on',
    };
    // An empty secret keeps the stored one (the form never shows it).
    const rules = await signInRules(db, ctx.admin.workspaceId);
    const clientSecret = formValue(body, 'client_secret') || (rules.sso ? services.secretBox.open(rules.sso.clientSecretSealed) : '');
    try {
      await setSso(db, {
        workspaceId: ctx.admin.workspaceId,
        issuer: values.issuer,
        clientId: values.clientId,
        clientSecret,
        domain: values.domain,
        createAdmins: values.createAdmins,
        trustMissingEmailVerified: values.trustMissingEmailVerified,
        passwordSignIn: values.passwordSignIn,
        actor: ctx.actor,
        now: services.clock(),
        box: services.secretBox,
        labels: FORM_LABELS,
      });
    } catch (err) {
      if (err instanceof AppError && err.code === 'invalid_parameter') {
        const field = typeof err.extra.param === 'string' ? err.extra.param : '_form';
        return sendHtml(reply, await renderSecurityPage(ctx, { ssoForm: { values, errors: { [field]: `${err.message}.` } } }), 400);
      }
      throw err;
    }
    const text = values.passwordSignIn
      ? 'Single sign-on saved. Admins of the domain can sign in with it; password sign-in stays on.'
      : 'Single sign-on saved. Admins now sign in only with it; password sign-in is off.';
    return sendHtml(reply, await renderSecurityPage(ctx, { notice: { kind: 'success', text } }));
  });

  scope.post('/security/sso/remove', async (request, reply) => {
    const ctx = pageContext(services, request);
    await clearSso(db, { workspaceId: ctx.admin.workspaceId, actor: ctx.actor, now: services.clock() });
    return sendHtml(
      reply,
      await renderSecurityPage(ctx, { notice: { kind: 'success', text: 'Single sign-on removed. Admins sign in with their passwords.' } }),
    );
  });
}
