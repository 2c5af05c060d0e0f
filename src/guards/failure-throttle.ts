/**
 * The one throttle of failed credentials: API keys per client address, operator tokens per
 * client address, console passwords per (account, address), per address and per account.
 *
 * Each budget is a token bucket of `limit` failures refilling over `windowMs` (so a spent
 * budget slows guessing down to `limit` per window rather than blocking for a whole window).
 * A credential is answered only while a failure can still be counted, and the counting is
 * atomic with the decision, so requests in flight at the same time cannot overshoot:
 *
 * - a cheap credential (a key's or token's SHA-256 compare) is checked first and then
 *   `settle`d: a failure takes one failure from every budget, and is answered 401 only if it
 *   could; a success takes nothing but is answered only while every budget has one left
 *   (answering a right guess normally behind the 429s would tell the guesser it was right);
 * - an expensive credential (a password: scrypt runs for tens of milliseconds) `reserve`s a
 *   failure before the hash runs and `release`s it when the password was right, so no more
 *   hashes run for an address than its budget allows, however many requests arrive at once.
 *
 * Kept in process memory, or in Redis (one Lua script per decision, atomic across processes)
 * when `WSOPS_REDIS_URL` is set. Keys are hashed: no email or client address is a Redis key.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

export interface Budget {
  /** What is counted, e.g. `api:<address>`; hashed before it is stored. */
  key: string;
  /** Failures allowed per window; the bucket refills at `limit` per `windowMs`. */
  limit: number;
  windowMs: number;
}

export interface ThrottleDecision {
  allowed: boolean;
  /** Seconds until every budget has a failure to spare again (0 when allowed). */
  retryAfter: number;
}

export interface FailureThrottle {
  /** Counts the outcome of a credential already checked; see the module comment. */
  settle(budgets: readonly Budget[], failed: boolean, nowMs: number): Promise<ThrottleDecision>;
  /** Takes one failure from every budget before a credential is checked (none when any is spent). */
  reserve(budgets: readonly Budget[], nowMs: number): Promise<ThrottleDecision>;
  /** Gives back what `reserve` took: the credential was right. */
  release(budgets: readonly Budget[], nowMs: number): Promise<void>;
  /** Remembers that `key` succeeded (e.g. an account signed in from an address) for `ttlMs`. */
  remember(key: string, ttlMs: number, nowMs: number): Promise<void>;
  /** Whether `key` succeeded within its remembered time. */
  remembered(key: string, nowMs: number): Promise<boolean>;
}

export const OPERATOR_FAILURE_LIMIT = 10;
export const OPERATOR_FAILURE_WINDOW_MS = 60_000;

function hashed(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Seconds until a bucket holding `tokens` has one whole failure to spare. */
function secondsUntilOne(tokens: number, b: Budget): number {
  return tokens >= 1 ? 0 : Math.max(1, Math.ceil(((1 - tokens) * b.windowMs) / b.limit / 1000));
}

/** cost 1: take one failure if every budget has one; cost 0: only ask; cost -1: give one back. */
type Cost = 1 | 0 | -1;

/** Tokens in a bucket at `nowMs`, refilled since it was last written. */
function refilled(state: { tokens: number; at: number }, b: Budget, nowMs: number): number {
  return Math.min(b.limit, state.tokens + (Math.max(0, nowMs - state.at) * b.limit) / b.windowMs);
}

const MEMORY_BUCKETS = 100_000;

export class MemoryFailureThrottle implements FailureThrottle {
  private readonly buckets = new Map<string, { tokens: number; at: number; budget: Budget }>();
  private readonly successes = new Map<string, number>();

  private apply(budgets: readonly Budget[], cost: Cost, nowMs: number): ThrottleDecision {
    // Synchronous from the first read to the last write: nothing can interleave in one process.
    const states = budgets.map((b) => {
      const key = hashed(b.key);
      const s = this.buckets.get(key);
      return { key, b, tokens: s ? refilled(s, b, nowMs) : b.limit, at: Math.max(nowMs, s?.at ?? nowMs) };
    });
    const allowed = cost < 0 || states.every((s) => s.tokens >= 1);
    if (allowed && cost !== 0) for (const s of states) s.tokens = Math.min(s.b.limit, s.tokens - cost);
    if (this.buckets.size >= MEMORY_BUCKETS) this.sweep(nowMs);
    for (const s of states) this.buckets.set(s.key, { tokens: s.tokens, at: s.at, budget: s.b });
    return { allowed, retryAfter: allowed ? 0 : Math.max(...states.map((s) => secondsUntilOne(s.tokens, s.b))) };
  }

  /** Bounded: full buckets are the default and go first; only a flood of spent ones clears them all. */
  private sweep(nowMs: number): void {
    for (const [key, s] of this.buckets) if (refilled(s, s.budget, nowMs) >= s.budget.limit) this.buckets.delete(key);
    if (this.buckets.size >= MEMORY_BUCKETS) this.buckets.clear();
  }

  async settle(budgets: readonly Budget[], failed: boolean, nowMs: number): Promise<ThrottleDecision> {
    return this.apply(budgets, failed ? 1 : 0, nowMs);
  }

  async reserve(budgets: readonly Budget[], nowMs: number): Promise<ThrottleDecision> {
    return this.apply(budgets, 1, nowMs);
  }

  async release(budgets: readonly Budget[], nowMs: number): Promise<void> {
    this.apply(budgets, -1, nowMs);
  }

  async remember(key: string, ttlMs: number, nowMs: number): Promise<void> {
    if (this.successes.size > 100_000) for (const [k, until] of this.successes) if (until <= nowMs) this.successes.delete(k);
    if (this.successes.size > 100_000) this.successes.clear();
    this.successes.set(hashed(key), nowMs + ttlMs);
  }

  async remembered(key: string, nowMs: number): Promise<boolean> {
    return (this.successes.get(hashed(key)) ?? 0) > nowMs;
  }
}

/**
 * KEYS: the budgets' buckets; ARGV: cost, now, then limit and window of each budget. Refills
 * every bucket, decides, writes: all in one script, so concurrent decisions are serialized.
 */
const APPLY_SCRIPT = `
local cost = tonumber(ARGV[1]); local now = tonumber(ARGV[2])
local tokens = {}; local ats = {}; local allowed = 1
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[1 + 2 * i]); local window = tonumber(ARGV[2 + 2 * i])
  local b = redis.call('HMGET', key, 't', 'a')
  local t = tonumber(b[1]) or limit
  local at = tonumber(b[2]) or now
  if now > at then t = math.min(limit, t + (now - at) * limit / window) end
  tokens[i] = t; ats[i] = math.max(now, at)
  if t < 1 then allowed = 0 end
end
if cost < 0 then allowed = 1 end
local out = {allowed}
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[1 + 2 * i]); local window = tonumber(ARGV[2 + 2 * i])
  if allowed == 1 and cost ~= 0 then tokens[i] = math.min(limit, tokens[i] - cost) end
  redis.call('HSET', key, 't', tostring(tokens[i]), 'a', tostring(ats[i]))
  redis.call('PEXPIRE', key, window + 1000)
  out[#out + 1] = tostring(tokens[i])
end
return out`;

/** Without `numberOfKeys` defined, the first argument says how many keys follow. */
type ApplyCommand = (numKeys: number, ...keysThenArgs: (string | number)[]) => Promise<[number, ...string[]]>;

export class RedisFailureThrottle implements FailureThrottle {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'wsops:fail:',
  ) {
    // Sent by its SHA (EVALSHA) after the first call, not as text on every request.
    redis.defineCommand('wsopsFailures', { lua: APPLY_SCRIPT });
  }

  private async apply(budgets: readonly Budget[], cost: Cost, nowMs: number): Promise<ThrottleDecision> {
    const keys = budgets.map((b) => this.prefix + hashed(b.key));
    const args = budgets.flatMap((b) => [b.limit, b.windowMs]);
    const command = (this.redis as unknown as { wsopsFailures: ApplyCommand }).wsopsFailures;
    const [allowed, ...tokens] = await command.call(this.redis, keys.length, ...keys, cost, nowMs, ...args);
    if (allowed === 1) return { allowed: true, retryAfter: 0 };
    return { allowed: false, retryAfter: Math.max(...budgets.map((b, i) => secondsUntilOne(Number(tokens[i]), b))) };
  }

  settle(budgets: readonly Budget[], failed: boolean, nowMs: number): Promise<ThrottleDecision> {
    return this.apply(budgets, failed ? 1 : 0, nowMs);
  }

  reserve(budgets: readonly Budget[], nowMs: number): Promise<ThrottleDecision> {
    return this.apply(budgets, 1, nowMs);
  }

  async release(budgets: readonly Budget[], nowMs: number): Promise<void> {
    await this.apply(budgets, -1, nowMs);
  }

  async remember(key: string, ttlMs: number): Promise<void> {
    await this.redis.set(`${this.prefix}ok:${hashed(key)}`, '1', 'PX', ttlMs);
  }

  async remembered(key: string): Promise<boolean> {
    return (await this.redis.exists(`${this.prefix}ok:${hashed(key)}`)) === 1;
  }
}

/** Shared through Redis when the deployment has it (several processes), else in process memory. */
export function failureThrottle(redis: Redis | undefined, prefix = 'wsops:fail:'): FailureThrottle {
  return redis ? new RedisFailureThrottle(redis, prefix) : new MemoryFailureThrottle();
}
