/**
 * Passkeys of the signed-in admin, as shown on the security page: the list (each with a link
 * to remove it), the form that registers a new one, and the page that confirms a removal.
 * console.js runs the browser's side (navigator.credentials) of the forms marked
 * `data-passkey`; the routes are passkey-routes.ts.
 */

import type { PageContext } from '../../console-kit/context.js';
import { type FieldErrors, formError, textField } from '../../console-kit/forms.js';
import { type Html, html } from '../../console-kit/html.js';
import { badge, csrfField, formatTime, layout } from '../../console-kit/layout.js';
import type { PasskeyRow } from '../passkeys.js';
import { passkeysUnavailable } from '../webauthn.js';

export const PASSKEY_NAME_MAX = 60;
const BASE = '/console/security/passkeys';

/** Where the removal of a passkey is confirmed (credential ids are base64url: safe in a path). */
export const removePath = (credentialId: string) => `${BASE}/${credentialId}/remove`;

/** The status line console.js writes to while the browser's passkey prompt is open. */
const status = html`<p class="hint" data-passkey-status role="status" aria-live="polite"></p>`;

export function passkeySection(ctx: PageContext, passkeys: PasskeyRow[], values: { name?: string; errors?: FieldErrors } = {}): Html {
  const unavailable = passkeysUnavailable(ctx.services.config.baseUrl);
  const list = passkeys.length
    ? html`<ul class="passkeys" aria-label="Your passkeys">${passkeys.map(
        (p) => html`<li><strong>${p.name}</strong>: added ${formatTime(p.created_at)}, last used ${formatTime(p.last_used_at, 'never')}.
  <a href="${removePath(p.credential_id)}">Remove<span class="visually-hidden"> ${p.name}</span></a></li>`,
      )}</ul>`
    : '';
  const form = unavailable
    ? html`<p class="warning">${unavailable}</p>`
    : html`<form method="post" action="${BASE}" class="stack" data-passkey="create" data-passkey-options="${BASE}/options" novalidate>
  ${csrfField(ctx)}
  ${formError(values.errors)}
  <input type="hidden" name="response" value="">
  ${textField({
    name: 'name',
    label: 'Name of the new passkey',
    hint: 'So you can tell your passkeys apart, such as “Work laptop” or “Blue security key”.',
    value: values.name ?? '',
    errors: values.errors,
    required: true,
    attrs: html`maxlength="${PASSKEY_NAME_MAX}" autocomplete="off"`,
  })}
  ${status}
  <div><button type="submit" class="button${passkeys.length ? '' : ' primary'}">Add a passkey</button></div>
</form>`;
  return html`<section class="card stack" aria-labelledby="passkeys">
<h2 id="passkeys">Passkeys ${passkeys.length ? badge('good', passkeys.length === 1 ? '1 passkey' : `${passkeys.length} passkeys`) : badge('neutral', 'None')}</h2>
<p>A passkey on this computer, your phone or a security key. After your password, sign-in asks you to use it (a fingerprint, your face, a PIN or a touch); it works only on this console’s own address, so a look-alike site cannot use it.</p>
${list}
${form}
</section>`;
}

/** The page that confirms the removal of a passkey: with another passkey, a code of the app, or a recovery code. */
export function removePage(ctx: PageContext, passkey: PasskeyRow, o: { totp: boolean; errors?: FieldErrors; status?: number }): Html {
  const action = removePath(passkey.credential_id);
  return layout(ctx, {
    title: 'Remove a passkey',
    nav: 'security',
    body: html`<section class="card stack" aria-labelledby="confirm-remove">
<h2 id="confirm-remove">Remove “${passkey.name}”?</h2>
<p>Added ${formatTime(passkey.created_at)}, last used ${formatTime(passkey.last_used_at, 'never')}. Once removed it no longer signs you in.
To confirm it is you, use one of your passkeys (this one too, if you still have it), or type a code.</p>
${formError(o.errors)}
<form method="post" action="${action}" class="stack" data-passkey="get" data-passkey-options="${action}/options">
  ${csrfField(ctx)}
  <input type="hidden" name="response" value="">
  ${status}
  <div><button type="submit" class="button danger-outline">Confirm with a passkey and remove</button></div>
</form>
<form method="post" action="${action}" class="stack" novalidate>
  ${csrfField(ctx)}
  ${textField({
    name: 'code',
    label: o.totp ? 'Or a code from your authenticator app, or a recovery code' : 'Or one of your recovery codes',
    errors: o.errors,
    attrs: html`autocomplete="one-time-code" spellcheck="false"`,
  })}
  <div class="actions"><button type="submit" class="button danger-outline">Confirm with the code and remove</button> <a class="button" href="/console/security">Cancel</a></div>
</form>
</section>`,
  });
}
