/** The stored form of a key's secret and the constant-time check against it. */
import crypto, { createHash, timingSafeEqual } from 'node:crypto';

/**
 * The secret carries 43 base62 characters (about 256 bits), so a single SHA-256 is a sound
 * stored form: there is nothing to brute-force that a slow hash would protect.
 */
export function hashSecret(secret: string): string {
  return sha256(secret).toString('hex');
}

/**
 * The one-shot `crypto.hash` (Node 20.12+) costs less than a `createHash` object on the
 * request path (ADR 14); older Node 20 releases fall back.
 */
const sha256: (text: string) => Buffer =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'buffer')
    : (text) => createHash('sha256').update(text).digest();

const DUMMY_HASH = sha256('0'.repeat(43));

/** Constant-time check; also run against a dummy hash when the key_id is unknown. */
export function secretMatches(secret: string, storedHash: Buffer | undefined): boolean {
  const given = sha256(secret);
  const stored = storedHash ?? DUMMY_HASH;
  const equal = stored.length === given.length && timingSafeEqual(given, stored);
  return equal && storedHash !== undefined;
}
