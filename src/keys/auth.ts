import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import type { FailureThrottle } from '../guards/failure-throttle.js';
import { addressBucket } from '../guards/rate-limit.js';
import type { Database, HotQueries } from '../store/database.js';
import type { KeyCache, KeyEntry } from './key-cache.js';
import type { KeyContext } from './key-context.js';
import { parseKey } from './key-format.js';
import { secretMatches } from './key-hashing.js';
import { findKeyForAuth, touchKey } from './key-lookup.js';
import { legacyKeyIds } from './legacy-keys.js';

/** The single 401 answer: no reason is ever distinguished. */
export const UNAUTHORIZED_DETAIL =
  'The API key was not accepted. Send Authorization: Bearer svc_sk_<env>_<key_id>_<secret> with a valid, unexpired, unrevoked key of this environment.';

export type { KeyContext };

/** What this file takes of the services built at start (services.ts). */
export interface AuthServices {
  config: Config;
  database: Database;
  hot: HotQueries;
  keyCache: KeyCache;
  failureThrottle: FailureThrottle;
  clock: Clock;
}

/** Last use is recorded coarsely: at most one write per key per this interval. */
const LAST_USE_RESOLUTION_MS = 60_000;

/**
 * Every refusal is the same error so no reason leaks to the client; the operator gets the
 * reason at debug level (the key id at most, never the header or the secret).
 */
function refused(request: FastifyRequest, reason: string, keyId?: string): AppError {
  request.log.debug({ reason, key_id: keyId }, 'authentication refused');
  return new AppError('unauthorized', UNAUTHORIZED_DETAIL);
}

function refusalReason(
  entry: KeyEntry | undefined,
  secretOk: boolean,
  environment: string,
  deployment: string,
  now: number,
): string | undefined {
  if (!entry) return 'unknown key id';
  if (!secretOk) return 'wrong secret';
  if (entry.environment !== environment) return 'key id of another environment';
  if (environment !== deployment) return `key of the ${environment} environment; this deployment serves ${deployment}`;
  if (entry.revokedAtMs !== null && entry.revokedAtMs <= now) return 'revoked key';
  if (entry.expiresAtMs <= now) return 'expired key';
  return undefined;
}

/**
 * Authenticates `Authorization: Bearer <key>`; nothing else is read (no cookies, no query
 * parameter). Every refusal is the same error so no reason leaks. A key whose checksum is wrong
 * is refused before any lookup unless it is one of the keys made before checksums. The key's
 * row comes from the key cache when it may be trusted (ADR 14); every check below runs on every
 * request either way.
 */
export async function authenticate(services: AuthServices, request: FastifyRequest): Promise<KeyEntry> {
  const header = request.headers.authorization;
  if (typeof header !== 'string') throw refused(request, 'no Authorization header');
  if (header.length > 200) throw refused(request, 'Authorization header longer than 200 characters');
  const m = /^Bearer +(\S+) *$/i.exec(header);
  if (!m) throw refused(request, 'Authorization is not "Bearer <key>"');
  const parsed = parseKey(m[1] as string);
  if (!parsed) throw refused(request, 'not of the form svc_sk_<env>_<key_id>_<secret>');
  if (!parsed.checksumOk && !(await legacyKeyIds(services)).has(parsed.keyId)) {
    throw refused(request, 'wrong checksum (a mistyped or made-up key)', parsed.keyId);
  }
  const entry = await services.keyCache.resolve(parsed.keyId, () => findKeyForAuth(services.hot, parsed.keyId));
  const now = services.clock();
  // The hash comparison runs whether or not the key exists, so timing says nothing either.
  const secretOk = secretMatches(parsed.secret, entry?.secretHash);
  const reason = refusalReason(entry, secretOk, parsed.environment, services.config.env, now);
  if (reason !== undefined || !entry) throw refused(request, reason ?? 'unknown key id', parsed.keyId);
  return entry;
}

/**
 * Last-use writes not yet settled, per database handle. The response never waits for one (it
 * is off the request path); whoever needs the row as of the requests already answered (a test,
 * a shutdown) awaits `lastUsesWritten`.
 */
const unsettledUses = new WeakMap<object, Set<Promise<void>>>();

/**
 * Records the key's use at most once a minute per key: this process skips the write within the
 * minute, and the write's own condition skips it when another process wrote within the minute.
 * It touches no column the cache depends on, so it invalidates nothing (the triggers ignore it).
 */
function recordUse(services: AuthServices, request: FastifyRequest, entry: KeyEntry, now: number): void {
  if (entry.lastUsedMs !== null && now - entry.lastUsedMs < LAST_USE_RESOLUTION_MS) return;
  entry.lastUsedMs = now;
  const notBefore = new Date(now - LAST_USE_RESOLUTION_MS).toISOString();
  const db = services.database.db;
  const writes = unsettledUses.get(db) ?? new Set<Promise<void>>();
  unsettledUses.set(db, writes);
  const write: Promise<void> = touchKey(db, entry.keyId, new Date(now).toISOString(), request.ip, notBefore)
    .catch((err: unknown) => request.log.warn({ err, key_id: entry.keyId }, 'could not record last use'))
    .finally(() => writes.delete(write));
  writes.add(write);
}

/** Settles when every last-use write started so far on this database handle has landed (or failed and been logged). */
export async function lastUsesWritten(db: AuthServices['database']['db']): Promise<void> {
  await Promise.all([...(unsettledUses.get(db) ?? [])]);
}

/**
 * Authentication behind the failed-authentication throttle: a client address may get at most
 * WSOPS_AUTH_FAILURES_PER_MINUTE 401s per minute. The key is checked first (a cheap compare)
 * and the outcome settled atomically (failure-throttle.ts): a failure is answered 401 only if
 * it could be counted, so concurrent requests cannot overshoot; once the budget is spent every
 * request from the address is refused with 429 until it refills, a valid key too: answering a
 * valid key normally would tell a guesser that its guess was right.
 */
export async function authenticateThrottled(services: AuthServices, request: FastifyRequest, reply: FastifyReply): Promise<KeyContext> {
  const failures = services.config.authFailuresPerMinute;
  const bucket = addressBucket(request.ip);
  const budgets = [{ key: `api:${bucket}`, limit: failures, windowMs: 60_000 }];
  let entry: KeyEntry | undefined;
  let refusal: AppError | undefined;
  try {
    entry = await authenticate(services, request);
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'unauthorized') throw err;
    refusal = err;
  }
  const gate = await services.failureThrottle.settle(budgets, refusal !== undefined, services.clock());
  if (!gate.allowed) {
    reply.header('Retry-After', String(gate.retryAfter));
    request.log.debug({ address: bucket }, 'refused: failed-authentication budget of the address spent');
    throw new AppError(
      'rate_limited',
      `Too many failed authentications from this address (at most ${failures} per minute); every request from it is refused for ${gate.retryAfter} s. Check the API key your client sends.`,
    );
  }
  if (refusal || !entry) throw refusal ?? new AppError('unauthorized', UNAUTHORIZED_DETAIL);
  // Only after the throttle: a right guess from a throttled address must not learn it was right.
  if (entry.allows !== undefined && !entry.allows(request.ip)) {
    request.log.debug({ key_id: entry.keyId, address: request.ip }, 'refused: address outside the key allowlist');
    throw new AppError(
      'ip_not_allowed',
      `Key ${entry.keyId} may only be used from the addresses on its allowlist, and this request came from ${request.ip}. Send it from an allowed address, or ask an admin of the workspace to add this one (console: API keys, or wsops key allow-ip).`,
    );
  }
  recordUse(services, request, entry, services.clock());
  return entry.context;
}

export function requireScope(ctx: KeyContext, scope: string): void {
  if (!ctx.scopes.includes(scope)) {
    throw new AppError(
      'missing_scope',
      `This key lacks the scope ${scope}, which this endpoint requires. Create a key that holds ${scope}.`,
      {
        missing_scope: scope,
      },
    );
  }
}
