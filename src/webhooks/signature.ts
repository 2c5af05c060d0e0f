/**
 * Webhook signatures: `X-Service-Signature: t=<unix_seconds>,v1=<hex>[,v1=<hex>...]`.
 *
 * Each `v1` is the lowercase hex HMAC-SHA256, keyed with a signing secret, over `<t>.` followed by
 * the raw body bytes. During a secret rotation the header carries one `v1` per secret (new first).
 * The format is the one Stripe uses for `Stripe-Signature`, so receivers can reuse that tooling.
 *
 * The server only signs. Verification is the client package's `verifyWebhook`
 * (packages/client/src/webhooks/verify.ts), the one verifier in the repository, which the
 * server's signing tests use.
 */
import { createHmac } from 'node:crypto';

/** The tolerance the documentation tells receivers (section 6); the client's verifier defaults to it (a test keeps them equal). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type RawBody = string | Uint8Array;

function hmacHex(secret: string, timestampText: string, rawBody: RawBody): string {
  return createHmac('sha256', secret).update(`${timestampText}.`, 'utf8').update(rawBody).digest('hex');
}

function checkTimestamp(timestamp: number): void {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new TypeError(`signature timestamp must be a non-negative integer of unix seconds (got ${timestamp})`);
  }
}

function checkSecret(secret: unknown): asserts secret is string {
  if (typeof secret !== 'string' || secret === '') throw new TypeError('a webhook signing secret must be a non-empty string');
}

/** Lowercase hex HMAC-SHA256 of `<timestamp>.` followed by the raw body bytes. */
export function signPayload(secret: string, timestamp: number, rawBody: RawBody): string {
  checkSecret(secret);
  checkTimestamp(timestamp);
  return hmacHex(secret, String(timestamp), rawBody);
}

/** `t=<unix_seconds>,v1=<hex>[,v1=<hex>...]`, one `v1` per secret in the order given (new secret first). */
export function signatureHeader(secrets: readonly string[], timestamp: number, rawBody: RawBody): string {
  if (secrets.length === 0) throw new TypeError('signatureHeader needs at least one signing secret');
  checkTimestamp(timestamp);
  return [`t=${timestamp}`, ...secrets.map((secret) => `v1=${signPayload(secret, timestamp, rawBody)}`)].join(',');
}
