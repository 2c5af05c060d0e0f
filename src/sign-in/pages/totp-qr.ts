/**
 * The authenticator app's setup key as a QR code, drawn here as inline SVG (uqr: no
 * dependencies, no outside service, no script), so the key never leaves the server's answer.
 */
import { renderSVG } from 'uqr';
import { type Html, html, raw } from '../../console-kit/html.js';

/** The `otpauth://` URI as a QR code an authenticator app scans; labelled for screen readers. */
export function totpQrCode(uri: string): Html {
  // Error correction M and the standard four-module quiet zone: what phone cameras read best.
  const svg = renderSVG(uri, { ecc: 'M', border: 4, pixelSize: 6, whiteColor: '#ffffff', blackColor: '#000000' });
  return html`<figure class="totp-qr" data-totp-qr>
  <div role="img" aria-label="QR code for an authenticator app to scan">${raw(svg)}</div>
</figure>`;
}
