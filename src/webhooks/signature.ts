/**
 * Webhook signatures: `X-Service-Signature: t=<unix_seconds>,v1=<hex>[,v1=<hex>...]`.
 *
 * Each `v1` is the lowercase hex HMAC-SHA256, keyed with a signing secret, over `<t>.` followed by
 * the raw body bytes. During a secret rotation the header carries one `v1` per secret (new first).
 * The format is the one Stripe uses for `Stripe-Signature`, so receivers can reuse that tooling.
 *
 * Dependency-free (node:crypto only): the client SDK reuses this file.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const DEFAULT_TOLERANCE_SECONDS = 300;

export type WebhookSignatureErrorCode = 'missing_header' | 'malformed' | 'timestamp_out_of_tolerance' | 'no_matching_signature';

export class WebhookSignatureError extends Error {
  constructor(
    readonly code: WebhookSignatureErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookSignatureError';
  }
}

export type RawBody = string | Uint8Array;

export interface VerifyOptions {
  /** Largest accepted difference between now and `t`, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** The current time in milliseconds since the epoch. Default `Date.now()`. */
  now?: number;
}

/** The body of every delivery (section 6). */
export interface WebhookEvent {
  id: string;
  type: string;
  created: string;
  api_version: string;
  data: Record<string, unknown>;
}

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
 * The receiver's check (section 6): split on commas into `name=value` parts, take `t` (digits
 * only) and every `v1`, refuse a `t` more than `toleranceSeconds` away from now, and accept if
 * any `v1` equals the expected signature of any secret under a constant-time comparison.
 * Unknown parts (such as `v0=`) are ignored. Throws WebhookSignatureError.
 */
export function verifySignature(
  rawBody: RawBody,
  header: string | undefined,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): void {
  const keys: readonly string[] = typeof secrets === 'string' ? [secrets] : secrets;
  if (keys.length === 0) throw new TypeError('verifySignature needs at least one signing secret');
  for (const key of keys) checkSecret(key);
  const toleranceSeconds = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (!(toleranceSeconds >= 0)) throw new TypeError(`toleranceSeconds must be a non-negative number (got ${toleranceSeconds})`);
  const now = options.now ?? Date.now();

  if (typeof header !== 'string' || header.trim() === '') {
    throw new WebhookSignatureError('missing_header', 'the signature header is missing or empty');
  }

  let t: string | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (name === 't') {
      if (t !== undefined) throw new WebhookSignatureError('malformed', 'the signature header has more than one t');
      t = value;
    } else if (name === 'v1') {
      signatures.push(value);
    }
  }
  if (t === undefined) throw new WebhookSignatureError('malformed', 'the signature header has no t (timestamp)');
  if (!/^[0-9]+$/.test(t))
    throw new WebhookSignatureError('malformed', `the signature timestamp t must be an integer of unix seconds (got ${JSON.stringify(t)})`);
  if (signatures.length === 0) throw new WebhookSignatureError('malformed', 'the signature header has no v1 signature');

  const ageSeconds = Math.abs(now - Number(t) * 1000) / 1000;
  if (!(ageSeconds <= toleranceSeconds)) {
    throw new WebhookSignatureError(
      'timestamp_out_of_tolerance',
      `the signature timestamp is ${Math.round(ageSeconds)} s away from now; at most ${toleranceSeconds} s is accepted`,
    );
  }

  const expected = keys.map((key) => Buffer.from(hmacHex(key, t, rawBody), 'utf8'));
  let matched = false;
  for (const signature of signatures) {
    const given = Buffer.from(signature, 'utf8');
    for (const candidate of expected) {
      if (given.length === candidate.length && timingSafeEqual(given, candidate)) matched = true;
    }
  }
  if (!matched)
    throw new WebhookSignatureError('no_matching_signature', 'no v1 signature in the header matches the body with the signing secret');
}

/**
 * Verifies the signature, then parses the raw body and returns the event. Throws
 * WebhookSignatureError, with code `malformed` when the signed body is not a JSON object.
 */
export function verifyWebhook<T = WebhookEvent>(
  rawBody: RawBody,
  header: string | undefined,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): T {
  verifySignature(rawBody, header, secrets, options);
  let event: unknown;
  try {
    const text = typeof rawBody === 'string' ? rawBody : new TextDecoder('utf-8', { fatal: true }).decode(rawBody);
    event = JSON.parse(text);
  } catch {
    throw new WebhookSignatureError('malformed', 'the webhook body is not valid UTF-8 JSON');
  }
  if (event === null || typeof event !== 'object' || Array.isArray(event)) {
    throw new WebhookSignatureError('malformed', 'the webhook body is not a JSON object');
  }
  return event as T;
}
