/**
 * The endpoint page's signature block: X-Service-Signature is always sent; the Standard
 * Webhooks headers are an opt-in beside it, for receivers that verify with a `standardwebhooks`
 * library. The rule and the headers are src/webhooks/signing/standard-signature.ts's.
 */

import type { PageContext } from '../../console-kit/context.js';
import { type Html, html } from '../../console-kit/html.js';
import { csrfField } from '../../console-kit/layout.js';
import { AppError } from '../../errors.js';
import type { EndpointView } from '../../webhooks/endpoints/endpoints.js';

const CHOICES = { service: false, standard: true } as const;

/** The form's value, checked: a tampered or empty choice is refused with the two it may be. */
export function parseSignatureChoice(raw: string): boolean {
  const value = raw.trim();
  if (!Object.hasOwn(CHOICES, value)) {
    throw new AppError(
      'invalid_parameter',
      'choose the signature headers: "service" (X-Service-Signature alone) or "standard" (also Standard Webhooks)',
      {
        param: 'signatures',
      },
    );
  }
  return CHOICES[value as keyof typeof CHOICES];
}

export function signaturesSection(ctx: PageContext, e: EndpointView): Html {
  const base = `/console/webhooks/${encodeURIComponent(e.id)}`;
  const option = (value: keyof typeof CHOICES, label: Html) =>
    html`<label class="check"><input type="radio" name="signatures" value="${value}"${CHOICES[value] === e.standard_webhooks ? html` checked` : ''}> <span>${label}</span></label>`;
  return html`<section aria-labelledby="signatures-h" id="signatures">
  <h2 id="signatures-h">Signature headers</h2>
  <p>Every delivery carries <code>X-Service-Signature</code>. Beside it, the endpoint can also be sent the
  <a href="https://www.standardwebhooks.com">Standard Webhooks</a> headers (<code>webhook-id</code>, <code>webhook-timestamp</code>,
  <code>webhook-signature</code>), so a receiver can verify with a <code>standardwebhooks</code> library and this endpoint's signing secret as shown here.</p>
  <form method="post" action="${base}/signatures" class="stack">${csrfField(ctx)}
  <fieldset class="field"><legend>Headers sent</legend>
  ${option('service', html`<code>X-Service-Signature</code> only`)}
  ${option('standard', html`<code>X-Service-Signature</code> and the Standard Webhooks headers`)}
  </fieldset>
  <p><button type="submit">Save signature headers</button></p></form>
</section>`;
}
