/**
 * The one settings schema. Every setting is read from the environment once, validated, and
 * documented here; the README's settings table mirrors this list (a test keeps them in step).
 */
export interface Config {
  databaseUrl: string;
  port: number;
  host: string;
  baseUrl: string;
  env: 'live' | 'test';
  /** Signs cursors. When unset, generated once and stored in the database. */
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
  /** Failed authentications per client address per minute before every request from it is refused. */
  authFailuresPerMinute: number;
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
    description: 'At least 32 characters; signs cursors. When unset, one is generated on first start and stored in the database.',
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
    description: '`redis://...`: shared rate-limit store for several API processes. Unset: limits are kept in process memory.',
  },
  { env: 'WSOPS_RATE_LIMIT_PER_SECOND', default: '50', description: 'Per-key token bucket refill rate (requests/second).' },
  { env: 'WSOPS_RATE_LIMIT_BURST', default: '100', description: 'Per-key token bucket size.' },
  { env: 'WSOPS_MAX_KEYS', default: '20', description: 'Plan limit: unrevoked, unexpired keys per workspace (both environments).' },
  {
    env: 'WSOPS_OPERATOR_TOKEN',
    default: '(unset)',
    description: 'Bearer token for the internal `/internal/v1` API; that API refuses every request while unset.',
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
    env: 'WSOPS_AUTH_FAILURES_PER_MINUTE',
    default: '20',
    description:
      'Failed authentications (401) allowed per client address per minute (a bucket of this size refilling over a minute). Once spent, every request from the address gets 429 until it refills. Shared through `WSOPS_REDIS_URL` when set.',
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

function int(name: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number from ${min} to ${max}; got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be a whole number from ${min} to ${max}; got ${n}`);
  return n;
}

export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const get = (name: string): string | undefined => {
    const v = source[name];
    return v === undefined || v === '' ? undefined : v;
  };
  const env = get('WSOPS_ENV') ?? 'test';
  if (env !== 'live' && env !== 'test') throw new ConfigError(`WSOPS_ENV must be live or test; got "${env}"`);
  const databaseUrl = get('WSOPS_DATABASE_URL') ?? 'sqlite:./data/wsops.db';
  if (!/^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(databaseUrl)) {
    throw new ConfigError('WSOPS_DATABASE_URL must be sqlite:PATH or postgres://USER@HOST:PORT/DB');
  }
  const port = int('WSOPS_PORT', get('WSOPS_PORT') ?? '8080', 0, 65535);
  const secret = get('WSOPS_SECRET');
  if (secret !== undefined && secret.length < 32) {
    throw new ConfigError('WSOPS_SECRET must be at least 32 characters (try: openssl rand -hex 32)');
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
  if (operatorToken !== undefined && operatorToken.length < 24) {
    throw new ConfigError('WSOPS_OPERATOR_TOKEN must be at least 24 characters');
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
    databaseUrl: databaseUrl.replace(/^postgresql:/, 'postgres:'),
    port,
    host: get('WSOPS_HOST') ?? '127.0.0.1',
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
    authFailuresPerMinute: int('WSOPS_AUTH_FAILURES_PER_MINUTE', get('WSOPS_AUTH_FAILURES_PER_MINUTE') ?? '20', 1, 1_000_000),
  };
}
