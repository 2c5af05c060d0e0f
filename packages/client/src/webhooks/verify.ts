/**
 * Verifying a delivery, exactly the six steps of the service description (section 6):
 *   1. work on the raw body bytes, before parsing;
 *   2. split `X-Service-Signature` on commas, each part `name=value`; collect `t` and every `v1`;
 *   3. reject when `t` or `v1` is missing or `t` is not an integer;
 *   4. reject when |now − t| exceeds the tolerance (300 s);
 *   5. expected = lowercase hex HMAC-SHA256, keyed with the signing secret, over `<t>.` + raw body;
 *   6. accept if any `v1` equals the expected value under a constant-time comparison.
 * With several secrets (a receiver mid-rotation) step 5 and 6 run for each.
 *
 * This is the repository's one verifier: the server's signing tests verify with it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const DEFAULT_TOLERANCE_SECONDS = 300;
export const SIGNATURE_HEADER = 'x-service-signature';

export type WebhookSignatureReason =
  | 'missing_header'
  | 'missing_timestamp'
  | 'invalid_timestamp'
  | 'missing_signature'
  | 'timestamp_out_of_tolerance'
  | 'no_matching_signature'
  | 'invalid_body';

/** The delivery is not authentic (or not usable): answer it with a 4xx and do not act on it. */
export class WebhookSignatureError extends Error {
  override name = 'WebhookSignatureError';
  constructor(
    readonly reason: WebhookSignatureReason,
    message: string,
  ) {
    super(message);
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
export interface WebhookEvent<D = Record<string, unknown>> {
  id: string;
  type: string;
  created: string;
  api_version: string;
  data: D;
}

function secretsOf(secrets: string | readonly string[]): readonly string[] {
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  if (!Array.isArray(list) || list.length === 0) throw new TypeError('verifyWebhook needs at least one signing secret');
  for (const s of list) if (typeof s !== 'string' || s === '') throw new TypeError('a webhook signing secret must be a non-empty string');
  return list;
}

/** Steps 1 to 6; throws WebhookSignatureError, returns nothing. */
export function verifySignature(
  rawBody: RawBody,
  header: string | null | undefined,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): void {
  const keys = secretsOf(secrets);
  const toleranceSeconds = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (!(toleranceSeconds >= 0)) throw new TypeError(`toleranceSeconds must be a non-negative number (got ${toleranceSeconds})`);
  const now = options.now ?? Date.now();
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    throw new TypeError('verifyWebhook needs the raw body (string or bytes) exactly as received, not a parsed object');
  }

  if (typeof header !== 'string' || header.trim() === '') {
    throw new WebhookSignatureError('missing_header', 'the X-Service-Signature header is missing or empty');
  }
  // Step 2.
  let t: string | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (name === 't') {
      if (t !== undefined) throw new WebhookSignatureError('invalid_timestamp', 'the signature header has more than one t');
      t = value;
    } else if (name === 'v1') {
      signatures.push(value);
    }
  }
  // Step 3.
  if (t === undefined) throw new WebhookSignatureError('missing_timestamp', 'the signature header has no t (timestamp)');
  if (!/^[0-9]+$/.test(t)) {
    throw new WebhookSignatureError(
      'invalid_timestamp',
      `the signature timestamp t must be an integer of unix seconds (got ${JSON.stringify(t)})`,
    );
  }
  if (signatures.length === 0) throw new WebhookSignatureError('missing_signature', 'the signature header has no v1 signature');
  // Step 4.
  const ageSeconds = Math.abs(now - Number(t) * 1000) / 1000;
  if (!(ageSeconds <= toleranceSeconds)) {
    throw new WebhookSignatureError(
      'timestamp_out_of_tolerance',
      `the signature timestamp is ${Math.round(ageSeconds)} s away from now; at most ${toleranceSeconds} s is accepted`,
    );
  }
  // Steps 5 and 6: compare every pair, without stopping at the first match.
  const expected = keys.map((key) => Buffer.from(createHmac('sha256', key).update(`${t}.`, 'utf8').update(rawBody).digest('hex'), 'utf8'));
  let matched = false;
  for (const signature of signatures) {
    const given = Buffer.from(signature, 'utf8');
    for (const candidate of expected) {
      if (given.length === candidate.length && timingSafeEqual(given, candidate)) matched = true;
    }
  }
  if (!matched) {
    throw new WebhookSignatureError('no_matching_signature', 'no v1 signature in the header matches the body with the signing secret');
  }
}

/**
 * Verifies the delivery and returns the parsed event. Throws WebhookSignatureError with a
 * `reason`; `invalid_body` when the signed body is not a JSON object.
 */
export function verifyWebhook<E = WebhookEvent>(
  rawBody: RawBody,
  header: string | null | undefined,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): E {
  verifySignature(rawBody, header, secrets, options);
  let event: unknown;
  try {
    const text = typeof rawBody === 'string' ? rawBody : new TextDecoder('utf-8', { fatal: true }).decode(rawBody);
    event = JSON.parse(text);
  } catch {
    throw new WebhookSignatureError('invalid_body', 'the webhook body is not valid UTF-8 JSON');
  }
  if (event === null || typeof event !== 'object' || Array.isArray(event)) {
    throw new WebhookSignatureError('invalid_body', 'the webhook body is not a JSON object');
  }
  return event as E;
}
