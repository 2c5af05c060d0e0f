/**
 * The one settings schema. Every setting is read from the environment once, validated, and
 * documented here; the README's settings table mirrors this list (a test keeps them in step).
 */
import { canonicalCidrs } from './ip-ranges.js';

export interface Config {
  databaseUrl: string;
  port: number;
  host: string;
  /** Port of the internal listener (operator API, /metrics, /readyz); unset: no internal listener. */
  internalPort: number | undefined;
  internalHost: string;
  baseUrl: string;
  env: 'live' | 'test';
  /**
   * Signs cursors and keys the encryption of webhook signing secrets. Required when live; in
   * test, when unset, generated once and stored in the database (beside what it protects).
   */
  secret: string | undefined;
  allowPrivateWebhooks: boolean;
  demo: boolean;
  redisUrl: string | undefined;
  rateLimitPerSecond: number;
  rateLimitBurst: number;
  maxKeys: number;
  operatorToken: string | undefined;
  logLevel: string;
  deliveryLeaseSeconds: number;
  deliveryRetentionDays: number;
  /** Whole-request deadline (headers and body), ms. */
  requestTimeoutMs: number;
  /** Deadline for the request headers, ms (at most requestTimeoutMs). */
  headersTimeoutMs: number;
  /** How long an idle keep-alive connection is held open, ms. */
  keepAliveTimeoutMs: number;
  maxConnections: number;
  /** Megabytes of the SQLite file the read connection maps (0: plain reads). */
  sqliteMmapMb: number;
  /** Threads reading list pages in `serve` (0: on the event loop). */
  pageThreads: number;
  /** Failed authentications per client address per minute before every request from it is refused. */
  authFailuresPerMinute: number;
  /** Keep what authentication reads per key in process memory between requests (ADR 14). */
  keyCache: boolean;
  /** CIDR ranges of reverse proxies whose X-Forwarded-For is believed (empty: none; the peer is the client). */
  trustedProxies: string[];
}

export interface SettingSpec {
  env: string;
  default: string;
  description: string;
}

export const SETTINGS: readonly SettingSpec[] = [
  {
    env: 'WSOPS_DATABASE_URL',
    default: 'sqlite:./data/wsops.db',
    description: '`sqlite:PATH` (embedded, WAL) or `postgres://...` (production; several processes may share it).',
  },
  { env: 'WSOPS_PORT', default: '8080', description: 'TCP port of `wsops serve`.' },
  { env: 'WSOPS_HOST', default: '127.0.0.1', description: 'Interface to listen on (`0.0.0.0` for all).' },
  {
    env: 'WSOPS_INTERNAL_PORT',
    default: '(unset)',
    description:
      'Port of the internal listener: the operator API `/internal/v1`, `/metrics`, `/readyz`, `/healthz`. Unset: no internal listener (the public one never serves them). `0` picks a free port.',
  },
  {
    env: 'WSOPS_INTERNAL_HOST',
    default: '127.0.0.1',
    description: 'Interface of the internal listener. Keep it on loopback or a private network; it is never meant to be public.',
  },
  {
    env: 'WSOPS_BASE_URL',
    default: 'http://localhost:8080',
    description: 'Public base address, used in the OpenAPI `servers` entry and printed links.',
  },
  {
    env: 'WSOPS_ENV',
    default: 'test',
    description: '`live` or `test`: the environment this deployment serves. Only keys of this environment authenticate.',
  },
  {
    env: 'WSOPS_SECRET',
    default: '(generated)',
    description:
      'At least 32 characters (`openssl rand -hex 32`); signs cursors and encrypts webhook signing secrets at rest. Required when `WSOPS_ENV=live`. In test, when unset, one is generated and stored in the database (a warning is logged: anyone with the database file can then read the signing secrets).',
  },
  {
    env: 'WSOPS_ALLOW_PRIVATE_WEBHOOKS',
    default: 'false',
    description: 'Test and development only: lets a webhook URL be `http`, any port, loopback. Refused when `WSOPS_ENV=live`.',
  },
  {
    env: 'WSOPS_DEMO',
    default: 'true',
    description: 'On an empty database, `serve` creates a demo workspace with seeded data and prints a key. Set `false` in production.',
  },
  {
    env: 'WSOPS_REDIS_URL',
    default: '(unset)',
    description:
      '`redis://...`: shared store of the rate limits (per key) and of the failure throttle (failed API keys and operator tokens per address, console passwords) for several API processes; checked by `/readyz`. Unset: kept in process memory.',
  },
  { env: 'WSOPS_RATE_LIMIT_PER_SECOND', default: '50', description: 'Per-key token bucket refill rate (requests/second).' },
  { env: 'WSOPS_RATE_LIMIT_BURST', default: '100', description: 'Per-key token bucket size.' },
  { env: 'WSOPS_MAX_KEYS', default: '20', description: 'Plan limit: unrevoked, unexpired keys per workspace (both environments).' },
  {
    env: 'WSOPS_OPERATOR_TOKEN',
    default: '(unset)',
    description:
      'Bearer token for the internal `/internal/v1` API; that API refuses every request while unset. At least 32 characters and 8 distinct ones (`openssl rand -hex 32`); 10 failed tokens from one address are answered 401, then every request from it 429 until a failure refills (one every 6 s).',
  },
  {
    env: 'WSOPS_DELIVERY_LEASE_SECONDS',
    default: '30',
    description:
      "How long a worker reserves a claimed delivery (11 to 3600; above the 10 s attempt timeout). A killed worker's deliveries are retried after it.",
  },
  {
    env: 'WSOPS_DELIVERY_RETENTION_DAYS',
    default: '30',
    description: 'Delivery history (attempts, finished jobs, their events) older than this is pruned hourly.',
  },
  {
    env: 'WSOPS_REQUEST_TIMEOUT_MS',
    default: '30000',
    description:
      'Deadline for receiving a whole request, headers and body (100 to 30000). A slower client gets 408 and its connection is closed.',
  },
  {
    env: 'WSOPS_HEADERS_TIMEOUT_MS',
    default: '10000',
    description:
      'Deadline for receiving the request headers (100 to 30000, at most `WSOPS_REQUEST_TIMEOUT_MS`; default 10000 or the request timeout if lower).',
  },
  {
    env: 'WSOPS_KEEP_ALIVE_TIMEOUT_MS',
    default: '5000',
    description: 'How long an idle keep-alive connection stays open between requests (100 to 120000).',
  },
  {
    env: 'WSOPS_MAX_CONNECTIONS',
    default: '10000',
    description: 'Open connections the server accepts at once (1 to 1000000); more are closed on arrival. Keep it below `ulimit -n`.',
  },
  {
    env: 'WSOPS_SQLITE_MMAP_MB',
    default: '2047',
    description:
      "SQLite only: megabytes of the database file the read connection maps into memory (0 to 2047, SQLite's ceiling; 0 reads pages with read calls). A page of 100 records reads about 25 database pages at random places; mapped, each costs no read call and no copy (a third less time per page here). Mapped pages are the kernel's file cache: they count in RSS as shared file pages, not as the process's own memory.",
  },
  {
    env: 'WSOPS_PAGE_THREADS',
    default: '1',
    description:
      'Threads of `wsops serve` that read list pages (0 to 16): each has its own database connection, and reads, assembles and compresses a page while the event loop goes on with other requests. 0 reads pages on the event loop. A page of 100 costs about 0.2 ms of database time and 0.1 ms of brotli; on one core 0 is as fast.',
  },
  {
    env: 'WSOPS_AUTH_FAILURES_PER_MINUTE',
    default: '20',
    description:
      'Failed authentications (401) allowed per client address per minute (a bucket of this size refilling over a minute). Once spent, every request from the address gets 429 until it refills. Shared through `WSOPS_REDIS_URL` when set.',
  },
  {
    env: 'WSOPS_KEY_CACHE',
    default: 'on',
    description:
      '`on` or `off`. On: each API process keeps the keys it has used in memory (at most 10,000, each reread after 5 s) and every request only checks that nothing changed since (SQLite: a version stamp; PostgreSQL: one extra `LISTEN` connection per API process). Any change that affects a key, by any process or plain SQL, is seen by the next request. Off: every request reads its key from the database.',
  },
  {
    env: 'WSOPS_TRUSTED_PROXIES',
    default: '',
    description:
      'Comma-separated CIDR ranges (IPv4 or IPv6, e.g. `10.0.0.0/8,::1`) of the reverse proxies in front of wsops. The client address (used by every throttle, key IP allowlist, last-use record and log line) is then read from `X-Forwarded-For` through these hops only; from any other peer the header is ignored. Empty: the TCP peer is the client.',
  },
  { env: 'WSOPS_LOG_LEVEL', default: 'info', description: '`fatal`, `error`, `warn`, `info`, `debug` or `silent`.' },
];

export class ConfigError extends Error {}

function bool(name: string, raw: string): boolean {
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(`${name} must be true or false; got "${raw}"`);
}

function onOff(name: string, raw: string): boolean {
  const v = raw.trim().toLowerCase();
  if (v === 'on') return true;
  if (v === 'off') return false;
  throw new ConfigError(`${name} must be on or off; got "${raw}"`);
}

function int(name: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number from ${min} to ${max}; got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be a whole number from ${min} to ${max}; got ${n}`);
  return n;
}

function cidrList(name: string, raw: string): string[] {
  try {
    return canonicalCidrs([raw]);
  } catch (err) {
    throw new ConfigError(`${name}: ${(err as Error).message}`);
  }
}

/** Fewer distinct characters than this is a pattern, not a secret (`abababab...`, `12341234...`). */
export const OPERATOR_TOKEN_MIN_DISTINCT = 8;
export const OPERATOR_TOKEN_MIN_LENGTH = 32;

/**
 * The operator token guards every domain action, so a guessable one is refused at start: at
 * least 32 characters, at least 8 distinct ones (which also refuses one repeated character),
 * no whitespace (a Bearer token is one word), at most 512 characters.
 */
function checkOperatorToken(token: string): void {
  const how = 'Make one with `openssl rand -hex 32`.';
  if (token.length < OPERATOR_TOKEN_MIN_LENGTH) {
    throw new ConfigError(`WSOPS_OPERATOR_TOKEN must be at least ${OPERATOR_TOKEN_MIN_LENGTH} characters; got ${token.length}. ${how}`);
  }
  if (token.length > 512) throw new ConfigError(`WSOPS_OPERATOR_TOKEN must be at most 512 characters. ${how}`);
  if (/\s/.test(token)) throw new ConfigError(`WSOPS_OPERATOR_TOKEN must not contain whitespace. ${how}`);
  const distinct = new Set(token).size;
  if (distinct < OPERATOR_TOKEN_MIN_DISTINCT) {
    throw new ConfigError(
      `WSOPS_OPERATOR_TOKEN has no real entropy: only ${distinct} distinct character(s), at least ${OPERATOR_TOKEN_MIN_DISTINCT} are required. ${how}`,
    );
  }
}

/** A database address (`name` is what the operator set, for the message), `postgresql:` spelled `postgres:`. */
export function checkDatabaseUrl(name: string, url: string): string {
  if (!/^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(url)) throw new ConfigError(`${name} must be sqlite:PATH or postgres://USER@HOST:PORT/DB`);
  return url.replace(/^postgresql:/, 'postgres:');
}

export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const get = (name: string): string | undefined => {
    const v = source[name];
    return v === undefined || v === '' ? undefined : v;
  };
  const env = get('WSOPS_ENV') ?? 'test';
  if (env !== 'live' && env !== 'test') throw new ConfigError(`WSOPS_ENV must be live or test; got "${env}"`);
  const databaseUrl = checkDatabaseUrl('WSOPS_DATABASE_URL', get('WSOPS_DATABASE_URL') ?? 'sqlite:./data/wsops.db');
  const port = int('WSOPS_PORT', get('WSOPS_PORT') ?? '8080', 0, 65535);
  const secret = get('WSOPS_SECRET');
  if (secret !== undefined && secret.length < 32) {
    throw new ConfigError('WSOPS_SECRET must be at least 32 characters (try: openssl rand -hex 32)');
  }
  if (secret === undefined && env === 'live') {
    throw new ConfigError(
      'WSOPS_SECRET is required when WSOPS_ENV=live: without it the secret that encrypts the webhook signing secrets would be stored in the database beside them. Make one with `openssl rand -hex 32`, keep it in your secret store, and set WSOPS_SECRET to it.',
    );
  }
  const allowPrivateWebhooks = bool('WSOPS_ALLOW_PRIVATE_WEBHOOKS', get('WSOPS_ALLOW_PRIVATE_WEBHOOKS') ?? 'false');
  if (allowPrivateWebhooks && env === 'live') {
    throw new ConfigError('WSOPS_ALLOW_PRIVATE_WEBHOOKS is for test and development only; it is refused when WSOPS_ENV=live');
  }
  const baseUrl = get('WSOPS_BASE_URL') ?? `http://localhost:${port}`;
  try {
    const u = new URL(baseUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
  } catch {
    throw new ConfigError(`WSOPS_BASE_URL must be an http(s) URL; got "${baseUrl}"`);
  }
  const redisUrl = get('WSOPS_REDIS_URL');
  if (redisUrl !== undefined && !/^rediss?:\/\/.+/.test(redisUrl)) {
    throw new ConfigError(`WSOPS_REDIS_URL must start with redis:// or rediss://; got "${redisUrl}"`);
  }
  const logLevel = get('WSOPS_LOG_LEVEL') ?? 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError(`WSOPS_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent; got "${logLevel}"`);
  }
  const operatorToken = get('WSOPS_OPERATOR_TOKEN');
  if (operatorToken !== undefined) checkOperatorToken(operatorToken);
  const internalPortRaw = get('WSOPS_INTERNAL_PORT');
  const internalPort = internalPortRaw === undefined ? undefined : int('WSOPS_INTERNAL_PORT', internalPortRaw, 0, 65535);
  if (internalPort !== undefined && internalPort !== 0 && internalPort === port) {
    throw new ConfigError(`WSOPS_INTERNAL_PORT must differ from WSOPS_PORT (both are ${port})`);
  }
  const requestTimeoutMs = int('WSOPS_REQUEST_TIMEOUT_MS', get('WSOPS_REQUEST_TIMEOUT_MS') ?? '30000', 100, 30_000);
  const headersTimeoutMs = int(
    'WSOPS_HEADERS_TIMEOUT_MS',
    get('WSOPS_HEADERS_TIMEOUT_MS') ?? String(Math.min(10_000, requestTimeoutMs)),
    100,
    30_000,
  );
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      `WSOPS_HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not exceed WSOPS_REQUEST_TIMEOUT_MS (${requestTimeoutMs}): the headers are part of the request`,
    );
  }
  return {
    databaseUrl,
    port,
    host: get('WSOPS_HOST') ?? '127.0.0.1',
    internalPort,
    internalHost: get('WSOPS_INTERNAL_HOST') ?? '127.0.0.1',
    baseUrl: baseUrl.replace(/\/+$/, ''),
    env,
    secret,
    allowPrivateWebhooks,
    demo: bool('WSOPS_DEMO', get('WSOPS_DEMO') ?? 'true'),
    redisUrl,
    rateLimitPerSecond: int('WSOPS_RATE_LIMIT_PER_SECOND', get('WSOPS_RATE_LIMIT_PER_SECOND') ?? '50', 1, 1_000_000),
    rateLimitBurst: int('WSOPS_RATE_LIMIT_BURST', get('WSOPS_RATE_LIMIT_BURST') ?? '100', 1, 1_000_000),
    maxKeys: int('WSOPS_MAX_KEYS', get('WSOPS_MAX_KEYS') ?? '20', 1, 100_000),
    operatorToken,
    logLevel,
    deliveryLeaseSeconds: int('WSOPS_DELIVERY_LEASE_SECONDS', get('WSOPS_DELIVERY_LEASE_SECONDS') ?? '30', 11, 3600),
    deliveryRetentionDays: int('WSOPS_DELIVERY_RETENTION_DAYS', get('WSOPS_DELIVERY_RETENTION_DAYS') ?? '30', 1, 3650),
    requestTimeoutMs,
    headersTimeoutMs,
    keepAliveTimeoutMs: int('WSOPS_KEEP_ALIVE_TIMEOUT_MS', get('WSOPS_KEEP_ALIVE_TIMEOUT_MS') ?? '5000', 100, 120_000),
    maxConnections: int('WSOPS_MAX_CONNECTIONS', get('WSOPS_MAX_CONNECTIONS') ?? '10000', 1, 1_000_000),
    sqliteMmapMb: int('WSOPS_SQLITE_MMAP_MB', get('WSOPS_SQLITE_MMAP_MB') ?? '2047', 0, 2047),
    pageThreads: int('WSOPS_PAGE_THREADS', get('WSOPS_PAGE_THREADS') ?? '1', 0, 16),
    authFailuresPerMinute: int('WSOPS_AUTH_FAILURES_PER_MINUTE', get('WSOPS_AUTH_FAILURES_PER_MINUTE') ?? '20', 1, 1_000_000),
    keyCache: onOff('WSOPS_KEY_CACHE', get('WSOPS_KEY_CACHE') ?? 'on'),
    trustedProxies: cidrList('WSOPS_TRUSTED_PROXIES', get('WSOPS_TRUSTED_PROXIES') ?? ''),
  };
}
