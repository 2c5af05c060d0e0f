/**
 * Seeded randomness for the demo data. Math.random is never used: the same seed, workspace and
 * `now` must give the same records on every machine, so every stream is an sfc32 generator
 * whose state comes from a sha256 of a text key.
 */
import { createHash } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const UINT32 = 4_294_967_296;

export type SeedWords = readonly [number, number, number, number];

/** Four 32-bit words from the sha256 of `text`: the starting state of one independent stream. */
export function seedWords(text: string): SeedWords {
  const h = createHash('sha256').update(text).digest();
  return [h.readUInt32LE(0), h.readUInt32LE(4), h.readUInt32LE(8), h.readUInt32LE(12)];
}

/** FNV-1a: a cheap 32-bit hash for short labels mixed into a seed. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** sfc32: small, fast, passes PractRand; good enough for demo data, never for secrets. */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(words: SeedWords) {
    [this.a, this.b, this.c, this.d] = words;
    // The first outputs of sfc32 still show the seed's structure; discard them.
    for (let i = 0; i < 12; i++) this.next();
  }

  static from(key: string): Random {
    return new Random(seedWords(key));
  }

  /** A uniformly distributed unsigned 32-bit integer. */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** A float in [0, 1). */
  float(): number {
    return this.next() / UINT32;
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.float() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.float() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.float() * items.length)] as T;
  }

  /** Picks one item with probability proportional to its weight. */
  weighted<T>(items: readonly T[], weights: readonly number[]): T {
    let total = 0;
    for (const w of weights) total += w;
    let r = this.float() * total;
    for (let i = 0; i < items.length; i++) {
      r -= weights[i] ?? 0;
      if (r < 0) return items[i] as T;
    }
    return items[items.length - 1] as T;
  }

  /**
   * Up to `k` distinct items. Draws indexes with rejection instead of shuffling a copy, because
   * the pools can be large (every person of a workspace) while `k` is small.
   */
  sample<T>(items: readonly T[], k: number): T[] {
    const n = items.length;
    if (k >= n) return this.shuffle([...items]);
    const chosen = new Set<number>();
    while (chosen.size < k) chosen.add(Math.floor(this.float() * n));
    return [...chosen].map((i) => items[i] as T);
  }

  /** Fisher-Yates, in place. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.float() * (i + 1));
      const tmp = items[i] as T;
      items[i] = items[j] as T;
      items[j] = tmp;
    }
    return items;
  }

  /**
   * Base62 text. `next() % 62` has a bias of about 1e-9 per character (2^32 is not a multiple
   * of 62): irrelevant for demo identifiers, and much faster than rejection sampling.
   */
  base62(length: number): string {
    let out = '';
    for (let i = 0; i < length; i++) out += BASE62[this.next() % 62];
    return out;
  }

  /** Upper-case letters and digits, for serial numbers. */
  alnum(length: number): string {
    let out = '';
    for (let i = 0; i < length; i++) out += BASE62[this.next() % 36];
    return out;
  }

  digits(length: number): string {
    let out = '';
    for (let i = 0; i < length; i++) out += BASE62[this.next() % 10];
    return out;
  }
}

function base62Fixed(n: number, width: number): string {
  let out = '';
  let v = n;
  for (let i = 0; i < width; i++) {
    out = BASE62[v % 62] + out;
    v = Math.floor(v / 62);
  }
  return out;
}

/**
 * Randomness addressed by (label, index) instead of by position in a stream: record `i` gets the
 * same identifier or plan whatever was generated before it, so a count can be computed before
 * the records are written and any record can be referred to by its index alone.
 */
export class KeyedRandom {
  private readonly key: SeedWords;

  /**
   * `ordered`: ids grow with the index (see `id`), for bulk seeds. A B-tree takes increasing
   * keys at its end, where random keys would dirty a different page per row.
   */
  constructor(
    keyText: string,
    private readonly ordered = false,
  ) {
    this.key = seedWords(keyText);
  }

  at(label: string, index: number): Random {
    const [k0, k1, k2, k3] = this.key;
    return new Random([(k0 ^ fnv1a(label)) >>> 0, (k1 ^ index) >>> 0, (k2 ^ Math.floor(index / UINT32)) >>> 0, k3]);
  }

  /**
   * `<prefix>_<16 base62>` (about 95 bits). The key includes the workspace id, so the same seed
   * gives different ids in different workspaces: ids are primary keys of one shared table.
   */
  id(prefix: string, index: number): string {
    if (!this.ordered) return `${prefix}_${this.at(prefix, index).base62(16)}`;
    // Like a ULID: a per-run head (5 chars), the index from a random start as 7 fixed-width
    // base62 digits (ASCII order is numeric order), 4 random chars. Still unique, still
    // different per workspace, and increasing within a run.
    const run = this.at(prefix, -1);
    const head = run.base62(5);
    const start = Math.floor(run.float() * 62 ** 6);
    return `${prefix}_${head}${base62Fixed(start + index, 7)}${this.at(prefix, index).base62(4)}`;
  }
}
