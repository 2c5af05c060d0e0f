/**
 * Delivery is at-least-once: the same event id can arrive again (a retry after a lost 2xx).
 * `IdempotencyGuard.once(eventId, fn)` runs `fn` for the first arrival only. The store is
 * pluggable (a database table or Redis for several receiver processes); the default keeps
 * ids in memory for `ttlMs` (72 h: longer than the ~21 h retry schedule).
 */

export interface IdempotencyStore {
  /** Marks the id as taken until `expiresAt` (ms). Resolves false when it was already taken and not expired. */
  claim(id: string, expiresAt: number, now: number): boolean | Promise<boolean>;
  /** Frees an id whose processing failed, so a retry of the delivery processes it. */
  release(id: string): void | Promise<void>;
}

export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly seen = new Map<string, number>();
  private claims = 0;

  claim(id: string, expiresAt: number, now: number): boolean {
    const until = this.seen.get(id);
    if (until !== undefined && until > now) return false;
    this.seen.set(id, expiresAt);
    // Sweep expired ids now and then, so memory stays bounded by the TTL window.
    if (++this.claims % 1000 === 0) for (const [key, exp] of this.seen) if (exp <= now) this.seen.delete(key);
    return true;
  }

  release(id: string): void {
    this.seen.delete(id);
  }

  get size(): number {
    return this.seen.size;
  }
}

export interface IdempotencyOptions {
  store?: IdempotencyStore;
  /** How long an id is remembered, in ms. Default 72 hours. */
  ttlMs?: number;
  /** The clock, in ms (tests inject one). Default `Date.now`. */
  now?: () => number;
}

export class IdempotencyGuard {
  readonly store: IdempotencyStore;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(options: IdempotencyOptions = {}) {
    this.store = options.store ?? new MemoryIdempotencyStore();
    this.ttlMs = options.ttlMs ?? 72 * 3600_000;
    this.now = options.now ?? Date.now;
    if (!(this.ttlMs > 0)) throw new TypeError(`ttlMs must be a positive number of milliseconds (got ${options.ttlMs})`);
  }

  /** Runs `fn` unless the id was seen within the TTL; returns whether it ran. A throwing `fn` frees the id. */
  async once(eventId: string, fn: () => unknown): Promise<boolean> {
    const now = this.now();
    if (!(await this.store.claim(eventId, now + this.ttlMs, now))) return false;
    try {
      await fn();
    } catch (err) {
      await this.store.release(eventId);
      throw err;
    }
    return true;
  }
}
