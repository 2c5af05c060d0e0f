/**
 * The workspace's single sign-on on the security page: what is set up, and the form that sets
 * it up or changes it (the same rules as `wsops sso set`: checkSsoInput in
 * src/sign-in/sign-in-rules.ts). The client secret is never shown again, not even to the admin
 * who typed it: the field is always empty, and left empty it keeps the stored secret.
 */

import type { PageContext } from '../../console-kit/context.js';
import { type FieldErrors, formError, textField } from '../../console-kit/forms.js';
import { type Html, html } from '../../console-kit/html.js';
import { badge, csrfField } from '../../console-kit/layout.js';
import { SSO_CALLBACK_PATH } from '../oidc.js';
import type { SignInRules } from '../sign-in-rules.js';

/** What the admin typed, shown again with a refusal (never the client secret). */
export interface SsoFormValues {
  issuer: string;
  clientId: string;
  domain: string;
  createAdmins: boolean;
  trustMissingEmailVerified: boolean;
  passwordSignIn: boolean;
}

export const SSO_PATH = '/console/security/sso';

export function ssoSection(ctx: PageContext, rules: SignInRules, form?: { values: SsoFormValues; errors: FieldErrors }): Html {
  const sso = rules.sso;
  const v: SsoFormValues = form?.values ?? {
    issuer: sso?.issuer ?? '',
    clientId: sso?.clientId ?? '',
    domain: sso?.domain ?? '',
    createAdmins: sso?.createAdmins ?? false,
    trustMissingEmailVerified: sso?.trustMissingEmailVerified ?? false,
    passwordSignIn: rules.passwordSignIn,
  };
  const errors = form?.errors;
  const base = ctx.services.config.baseUrl;
  const facts = sso
    ? html`<dl class="facts">
  <dt>Single sign-on</dt><dd>${badge('good', 'On')} OpenID Connect, issuer <code>${sso.issuer}</code></dd>
  <dt>Allowed email domain</dt><dd><code>${sso.domain}</code></dd>
  <dt>New admins</dt><dd>${sso.createAdmins ? 'Created at their first SSO sign-in' : 'Must be invited first'}</dd>
  <dt>Email verification</dt><dd>${sso.trustMissingEmailVerified ? 'email_verified must be true; an answer without the claim is trusted' : 'email_verified must be true'}</dd>
  <dt>Password sign-in</dt><dd>${rules.passwordSignIn ? 'On' : 'Off (single sign-on only)'}</dd>
  <dt>Sign-in link</dt><dd><code>${base}/console/sso/${ctx.admin.workspaceId}</code></dd>
</dl>`
    : html`<p>Single sign-on ${badge('neutral', 'Off')}. Set it up below (or your operator, with <code>wsops sso set --workspace ${ctx.admin.workspaceId} …</code>).</p>`;
  const check = (name: string, checked: boolean, label: string, hint: string) =>
    html`<label class="check"><input type="checkbox" name="${name}" value="on"${checked ? html` checked` : ''}>
  <span>${label} <span class="hint">${hint}</span></span></label>`;
  const remove = sso
    ? html`<form method="post" action="${SSO_PATH}/remove" data-confirm="Remove single sign-on? Password sign-in is switched back on for every admin.">
  ${csrfField(ctx)}
  <button type="submit" class="button danger-outline">Remove single sign-on</button>
</form>`
    : '';
  return html`<h3 id="sso-title">Single sign-on (OpenID Connect)</h3>
${facts}
<form method="post" action="${SSO_PATH}" class="stack" aria-labelledby="sso-title" novalidate>
  ${csrfField(ctx)}
  ${formError(errors)}
  <p class="hint">At your provider, register a web client with the redirect URI <code>${base}${SSO_CALLBACK_PATH}</code>.</p>
  ${textField({ name: 'issuer', label: 'Issuer', type: 'url', value: v.issuer, errors, required: true, hint: 'The provider’s issuer URL, such as https://login.example.com (its discovery document is read from there).', attrs: html`autocomplete="off" spellcheck="false"` })}
  ${textField({ name: 'client_id', label: 'Client ID', value: v.clientId, errors, required: true, attrs: html`autocomplete="off" spellcheck="false"` })}
  ${textField({
    name: 'client_secret',
    label: 'Client secret',
    type: 'password',
    errors,
    required: !sso,
    hint: sso ? 'Stored sealed and never shown. Leave it empty to keep the current secret.' : 'Stored sealed and never shown again.',
    attrs: html`autocomplete="new-password"`,
  })}
  ${textField({ name: 'domain', label: 'Allowed email domain', value: v.domain, errors, required: true, hint: 'Only addresses of this domain may sign in, such as example.com.', attrs: html`autocomplete="off" spellcheck="false"` })}
  ${check('create_admins', v.createAdmins, 'Create admins just in time', 'An address of the domain that is not an admin yet becomes one at its first single sign-on.')}
  ${check('trust_missing_email_verified', v.trustMissingEmailVerified, 'Trust addresses without email_verified', 'Only for a provider that never sends the email_verified claim: its addresses are then taken as verified. An answer saying false is always refused.')}
  ${check('password_sign_in', v.passwordSignIn, 'Password sign-in', 'Unticked, admins sign in only through the provider: try single sign-on in a private window first.')}
  <div><button type="submit" class="button">${sso ? 'Save single sign-on' : 'Set up single sign-on'}</button></div>
</form>
${remove}`;
}
