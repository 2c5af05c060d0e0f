import { randomFillSync } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Random bytes are drawn from a pool refilled 4 KB at a time: one call into the CSPRNG per
 * few hundred ids instead of one per id (a request id on every request made that call a
 * visible part of a small request's time; ADR 15). The bytes are as random; only the call is batched.
 */
const POOL = Buffer.allocUnsafe(4096);
let poolOffset = POOL.length;

function randomByte(): number {
  if (poolOffset === POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  return POOL[poolOffset++] as number;
}

/** Random base62 text of `length` characters (rejection sampling: no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

/** A new identifier such as `ast_4fQ2...`: 16 base62 characters, about 95 bits. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBase62(16)}`;
}
