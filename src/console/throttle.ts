/**
 * Wrong-password throttling for console sign-in: at most LIMIT failures per key (an account's
 * email, a client address) in a fixed window that starts at the first failure.
 *
 * Not the API's token buckets (src/api/rate-limit.ts): a bucket can only be checked by taking a
 * token, so every sign-in (right or wrong) would count, and the people who sign in most would
 * lock themselves out. Here only failures count, and the check before verifying changes nothing.
 * With WSOPS_REDIS_URL the counts live in Redis, shared by every API process.
 */
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';

export interface ThrottleRule {
  limit: number;
  windowMs: number;
}

export interface FailureCounter {
  /** Seconds until the key may try again; 0 when it may try now. */
  blockedFor(key: string, nowMs: number): Promise<number>;
  /** Counts one failure. */
  fail(key: string, nowMs: number): Promise<void>;
  close(): Promise<void>;
}

export class MemoryFailureCounter implements FailureCounter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  constructor(private readonly rule: ThrottleRule) {}

  async blockedFor(key: string, nowMs: number): Promise<number> {
    const w = this.windows.get(key);
    if (!w || nowMs >= w.resetAt || w.count < this.rule.limit) return 0;
    return Math.max(1, Math.ceil((w.resetAt - nowMs) / 1000));
  }

  async fail(key: string, nowMs: number): Promise<void> {
    const w = this.windows.get(key);
    if (!w || nowMs >= w.resetAt) this.windows.set(key, { count: 1, resetAt: nowMs + this.rule.windowMs });
    else w.count += 1;
    if (this.windows.size > 100_000) this.windows.clear(); // bounded; losing counts only loosens the limit
  }

  async close(): Promise<void> {}
}

export class RedisFailureCounter implements FailureCounter {
  private readonly redis: Redis;
  constructor(
    url: string,
    private readonly rule: ThrottleRule,
    private readonly prefix: string,
  ) {
    this.redis = new Redis(url, { maxRetriesPerRequest: 2 });
  }

  private key(key: string): string {
    // Hashed: an email address never appears as a Redis key.
    return this.prefix + createHash('sha256').update(key).digest('hex');
  }

  async blockedFor(key: string): Promise<number> {
    const k = this.key(key);
    const [count, ttl] = await Promise.all([this.redis.get(k), this.redis.pttl(k)]);
    if (Number(count ?? 0) < this.rule.limit || ttl <= 0) return 0;
    return Math.max(1, Math.ceil(ttl / 1000));
  }

  async fail(key: string): Promise<void> {
    const k = this.key(key);
    await this.redis.multi().set(k, '0', 'PX', this.rule.windowMs, 'NX').incr(k).exec();
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

export function failureCounter(redisUrl: string | undefined, rule: ThrottleRule, prefix: string): FailureCounter {
  return redisUrl ? new RedisFailureCounter(redisUrl, rule, prefix) : new MemoryFailureCounter(rule);
}
