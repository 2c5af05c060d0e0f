/**
 * Standard Webhooks headers (https://www.standardwebhooks.com), sent beside the seed's
 * `X-Service-Signature` when an endpoint opts in, so receivers can verify with the official
 * `standardwebhooks` libraries in any language:
 *
 *   webhook-id: the event id (the same on every retry: the spec's idempotency key)
 *   webhook-timestamp: unix seconds of the attempt
 *   webhook-signature: `v1,<base64 HMAC-SHA256>` per signing secret, space-separated, new first
 *
 * The HMAC is over `<id>.<timestamp>.<raw body>` keyed with the base64-decoded part of the
 * secret after `whsec_`: the spec's reading of a `whsec_` secret, so the secret as the console
 * shows it is what a receiver passes to `new Webhook(secret)`. Our secrets are `whsec_` and 32
 * base62 characters, which are valid base64 (24 key bytes).
 */
import { createHmac } from 'node:crypto';
import type { RawBody } from './signature.js';

const PREFIX = 'whsec_';

/** The HMAC key a Standard Webhooks library derives from a `whsec_` secret. */
export function standardKey(secret: string): Buffer {
  const encoded = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
  if (encoded === '' || encoded.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) {
    throw new TypeError('a Standard Webhooks secret must be whsec_ followed by base64');
  }
  return Buffer.from(encoded, 'base64');
}

export function standardSignature(secret: string, messageId: string, timestamp: number, rawBody: RawBody): string {
  const mac = createHmac('sha256', standardKey(secret)).update(`${messageId}.${timestamp}.`, 'utf8').update(rawBody);
  return `v1,${mac.digest('base64')}`;
}

/** The three headers, one signature per secret in the order given (new secret first). */
export function standardHeaders(
  secrets: readonly string[],
  messageId: string,
  timestamp: number,
  rawBody: RawBody,
): { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string } {
  if (secrets.length === 0) throw new TypeError('standardHeaders needs at least one signing secret');
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => standardSignature(s, messageId, timestamp, rawBody)).join(' '),
  };
}
