/**
 * Throttles failures per key: failed operator tokens per client address (internal API), wrong
 * console passwords per account and per address. Only failures count, so a client that sends
 * the right credential is never slowed; a key that failed `limit` times within a window is
 * refused (429) until that window ends, whatever it sends next, so guessing cannot continue at
 * full speed behind the 429s.
 *
 * The rate limiter (`rate-limit.ts`) consumes a token on every call and cannot tell "blocked"
 * without counting a request; this needs to ask first and count only failures, hence a
 * fixed-window counter with the same two stores: process memory, or Redis when
 * `WSOPS_REDIS_URL` is set (shared by several processes).
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

export interface FailureThrottle {
  /** Seconds until this address may try again; 0 when it may try now. */
  blockedFor(address: string, nowMs: number): Promise<number>;
  /** Counts one failure of this address. */
  failed(address: string, nowMs: number): Promise<void>;
}

export const OPERATOR_FAILURE_LIMIT = 10;
export const OPERATOR_FAILURE_WINDOW_MS = 60_000;

export class MemoryFailureThrottle implements FailureThrottle {
  private readonly windows = new Map<string, { count: number; endsAt: number }>();
  constructor(
    private readonly limit = OPERATOR_FAILURE_LIMIT,
    private readonly windowMs = OPERATOR_FAILURE_WINDOW_MS,
  ) {}

  async blockedFor(address: string, nowMs: number): Promise<number> {
    const w = this.windows.get(address);
    if (!w || w.endsAt <= nowMs || w.count < this.limit) return 0;
    return Math.max(1, Math.ceil((w.endsAt - nowMs) / 1000));
  }

  async failed(address: string, nowMs: number): Promise<void> {
    let w = this.windows.get(address);
    if (!w || w.endsAt <= nowMs) {
      // Bounded: expired windows are dropped before a new address is added to a full map.
      if (this.windows.size >= 10_000) for (const [a, x] of this.windows) if (x.endsAt <= nowMs) this.windows.delete(a);
      if (this.windows.size >= 10_000) this.windows.clear();
      w = { count: 0, endsAt: nowMs + this.windowMs };
      this.windows.set(address, w);
    }
    w.count++;
  }
}

/** INCR + PEXPIRE on the first failure: the window starts at an address's first failure. */
const FAIL_SCRIPT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

export class RedisFailureThrottle implements FailureThrottle {
  constructor(
    private readonly redis: Redis,
    private readonly limit = OPERATOR_FAILURE_LIMIT,
    private readonly windowMs = OPERATOR_FAILURE_WINDOW_MS,
    private readonly prefix = 'wsops:opfail:',
  ) {}

  /** Hashed: an email address or a client address never appears as a Redis key. */
  private key(key: string): string {
    return this.prefix + createHash('sha256').update(key).digest('hex');
  }

  async blockedFor(key: string): Promise<number> {
    const k = this.key(key);
    const [count, ttl] = await Promise.all([this.redis.get(k), this.redis.pttl(k)]);
    if (Number(count ?? 0) < this.limit || ttl <= 0) return 0;
    return Math.max(1, Math.ceil(ttl / 1000));
  }

  async failed(key: string): Promise<void> {
    await this.redis.eval(FAIL_SCRIPT, 1, this.key(key), this.windowMs);
  }
}

/** Shared through Redis when the deployment has it (several processes), else in process memory. */
export function failureThrottle(redis: Redis | undefined, limit: number, windowMs: number, prefix: string): FailureThrottle {
  return redis ? new RedisFailureThrottle(redis, limit, windowMs, prefix) : new MemoryFailureThrottle(limit, windowMs);
}
