import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Random base62 text of `length` characters (rejection sampling: no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** A new identifier such as `ast_4fQ2...`: 16 base62 characters, about 95 bits. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBase62(16)}`;
}

export function toBase62(n: bigint, width: number): string {
  let out = '';
  let v = n;
  while (v > 0n) {
    out = BASE62[Number(v % 62n)] + out;
    v /= 62n;
  }
  return out.padStart(width, '0').slice(-width);
}
