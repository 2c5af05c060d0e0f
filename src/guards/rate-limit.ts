import type { Redis } from 'ioredis';

export interface RateDecision {
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Seconds until another request would be allowed (0 when allowed). */
  retryAfter: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
}

export interface RateLimiter {
  readonly perSecond: number;
  readonly burst: number;
  /**
   * Refills the bucket, then: allowed when a whole token is there, and `cost` tokens are
   * taken when allowed (cost 0 only looks: the failed-authentication throttle checks first
   * and takes a token only when authentication fails).
   */
  take(bucket: string, nowMs: number, cost?: number): Promise<RateDecision>;
  close(): Promise<void>;
}

function decide(tokens: number, allowed: boolean, perSecond: number, burst: number): RateDecision {
  return {
    allowed,
    remaining: Math.max(0, Math.floor(tokens)),
    retryAfter: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / perSecond)),
    resetSeconds: Math.ceil((burst - tokens) / perSecond),
  };
}

/** Token bucket per key in process memory: right for one API process. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    readonly perSecond: number,
    readonly burst: number,
  ) {}

  async take(bucket: string, nowMs: number, cost = 1): Promise<RateDecision> {
    const b = this.buckets.get(bucket) ?? { tokens: this.burst, at: nowMs };
    b.tokens = Math.min(this.burst, b.tokens + (Math.max(0, nowMs - b.at) / 1000) * this.perSecond);
    b.at = nowMs;
    const allowed = b.tokens >= 1;
    if (allowed) b.tokens -= cost;
    this.buckets.set(bucket, b);
    if (this.buckets.size > 100_000) this.buckets.clear(); // bounded: a full bucket is the default anyway
    return decide(b.tokens, allowed, this.perSecond, this.burst);
  }

  async close(): Promise<void> {}
}

/**
 * Token bucket per key in Redis, updated atomically by a Lua script, so several API
 * processes serving one workspace share one limit per key.
 */
const SCRIPT = `
local rate = tonumber(ARGV[1]); local burst = tonumber(ARGV[2]); local now = tonumber(ARGV[3]); local cost = tonumber(ARGV[4])
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(b[1]) or burst
local at = tonumber(b[2]) or now
if now > at then tokens = math.min(burst, tokens + (now - at) / 1000 * rate) end
local allowed = 0
if tokens >= 1 then tokens = tokens - cost; allowed = 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(math.max(now, at)))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return {allowed, tostring(tokens)}`;

export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Redis;
  /** `RedisClient` is ioredis' `Redis`, passed in so that only a deployment with Redis loads ioredis. */
  constructor(
    RedisClient: typeof Redis,
    url: string,
    readonly perSecond: number,
    readonly burst: number,
    private readonly prefix = 'wsops:rl:',
  ) {
    this.redis = new RedisClient(url, { maxRetriesPerRequest: 2, lazyConnect: false, enableOfflineQueue: true });
    // Named by the script's hash: a process running an older script version never clashes.
    this.redis.defineCommand('wsopsTake', { numberOfKeys: 1, lua: SCRIPT });
  }

  async take(bucket: string, nowMs: number, cost = 1): Promise<RateDecision> {
    const cmd = (this.redis as unknown as { wsopsTake: (...a: (string | number)[]) => Promise<[number, string]> }).wsopsTake;
    const [allowed, tokens] = await cmd.call(this.redis, this.prefix + bucket, this.perSecond, this.burst, nowMs, cost);
    return decide(Number(tokens), allowed === 1, this.perSecond, this.burst);
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

/**
 * The bucket of a client address for the failed-authentication throttle: an IPv4 address
 * (also when IPv4-mapped), or the /64 network of an IPv6 address, since one IPv6 host
 * usually holds a whole /64 and could otherwise rotate through it.
 */
export function addressBucket(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1] as string;
  if (!ip.includes(':')) return ip;
  const [head = '', tail = ''] = ip.split('%')[0]?.split('::') ?? [];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => (Number.parseInt(g, 16) || 0).toString(16))
    .join(':')}::/64`;
}
