import { crc32 } from 'node:zlib';

/**
 * The text of an API key, `svc_sk_<env>_<key_id>_<secret>`, and its checksum (ADR 29).
 *
 * The last six characters of `<secret>` are the CRC32 of everything before them (the whole key
 * text up to that point, prefix included), written in base62 with leading zeros: a secret
 * scanner can tell a real key from a look-alike, and a mistyped key is refused before any
 * lookup. The other 37 characters are random (about 220 bits). Keys made before checksums
 * (migration 0018 marks them) have 43 random characters and are still accepted.
 */
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Characters of `<secret>`, checksum included. */
export const SECRET_LENGTH = 43;

export const CHECKSUM_LENGTH = 6;

export const KEY_ID_LENGTH = 16;

/** The published pattern (README, portal, secret-scanner rules): word-bounded, no flags needed. */
export const KEY_REGEX_SOURCE = `\\bsvc_sk_(?:live|test)_[0-9A-Za-z]{${KEY_ID_LENGTH}}_[0-9A-Za-z]{${SECRET_LENGTH}}\\b`;

/** `svc_sk_<env>_<key_id>_<secret>`; key_id and secret are base62, so `_` separates cleanly. */
const KEY_PATTERN = /^svc_sk_(live|test)_([0-9A-Za-z]{16})_([0-9A-Za-z]{43})$/;

export interface ParsedKey {
  environment: 'live' | 'test';
  keyId: string;
  secret: string;
  /** Whether the last six characters are the checksum of the rest (false for keys made before checksums). */
  checksumOk: boolean;
}

/** Base62 of a 32-bit unsigned number, zero-padded to six characters (62^6 > 2^32). */
export function base62Checksum(text: string): string {
  let n = crc32(text);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** The full key text for a new key: `random` is the secret's 37 random characters. */
export function formatKey(environment: 'live' | 'test', keyId: string, random: string): { key: string; secret: string } {
  const body = `svc_sk_${environment}_${keyId}_${random}`;
  const checksum = base62Checksum(body);
  return { key: body + checksum, secret: random + checksum };
}

/** True when `key` has the shape and its checksum is right: what a scanner may call a real key. */
export function hasValidChecksum(key: string): boolean {
  return key.length > CHECKSUM_LENGTH && base62Checksum(key.slice(0, -CHECKSUM_LENGTH)) === key.slice(-CHECKSUM_LENGTH);
}

export function parseKey(text: string): ParsedKey | undefined {
  const m = KEY_PATTERN.exec(text);
  if (!m) return undefined;
  return {
    environment: m[1] as 'live' | 'test',
    keyId: m[2] as string,
    secret: m[3] as string,
    checksumOk: hasValidChecksum(text),
  };
}
