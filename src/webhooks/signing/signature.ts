/**
 * Webhook signatures: `X-Service-Signature: t=<unix_seconds>,v1=<hex>[,v1=<hex>...]`.
 *
 * Each `v1` is the lowercase hex HMAC-SHA256, keyed with a signing secret, over `<t>.` followed by
 * the raw body bytes. During a secret rotation the header carries one `v1` per secret (new first).
 * The format is the one Stripe uses for `Stripe-Signature`, so receivers can reuse that tooling.
 *
 * The server signs. Receivers verify with the client package's `verifyWebhook`
 * (packages/client/src/webhooks/verify.ts), which the server's signing tests use. The server
 * package cannot depend on the client package, so `wsops listen` (a receiver for local testing)
 * checks with `matchingSignature` below; a test keeps the two in agreement.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

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

/**
 * Why a delivery's signature does not hold (`undefined` when it does): the header must carry
 * `t` and a `v1` that one of the secrets produced over `<t>.` + the raw body, compared in
 * constant time, with `t` within the tolerance of `nowSeconds`.
 */
export function signatureProblem(
  header: string | undefined,
  rawBody: RawBody,
  secrets: readonly string[],
  nowSeconds: number,
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
): string | undefined {
  if (!header) return 'no X-Service-Signature header';
  const parts = header.split(',').map((p) => p.trim().split('='));
  const t = parts.find(([k]) => k === 't')?.[1];
  const given = parts.filter(([k, v]) => k === 'v1' && v !== undefined).map(([, v]) => Buffer.from(v as string, 'utf8'));
  if (t === undefined || !/^\d+$/.test(t)) return 'the signature header has no integer t=';
  if (given.length === 0) return 'the signature header has no v1=';
  if (Math.abs(nowSeconds - Number(t)) > toleranceSeconds)
    return `the signature timestamp is more than ${toleranceSeconds} s away from now`;
  if (secrets.length === 0) return 'no signing secret to check against';
  for (const secret of secrets) {
    const expected = Buffer.from(hmacHex(secret, t, rawBody), 'utf8');
    if (given.some((v) => v.length === expected.length && timingSafeEqual(v, expected))) return undefined;
  }
  return 'no v1 signature matches the signing secret';
}
