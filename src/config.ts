/**
 * The one settings schema (ADR 0027). Each entry of SETTINGS declares one environment variable
 * once: its name, how its text is checked and turned into a value (a zod schema, whose messages
 * say what was wrong and how to fix it), its default, and what it means. Everything else is
 * derived from that list: the `Config` type, `loadConfig`, the start-up summary and
 * `wsops status` (secrets redacted), and the README's settings table (`npm run readme-settings`
 * writes it; test/config.test.ts fails when it drifts).
 *
 * To add a setting, add one entry to SETTINGS (in the order the README should list it) and run
 * `npm run readme-settings`. A rule between two settings goes in CROSS_RULES.
 */
import { z } from '#zod';
import { canonicalCidrs } from './ip-ranges.js';
import { redactUrl } from './redact-url.js';

export class ConfigError extends Error {}

/** The text of another setting as it will be read (set, or its own default), for a derived default. */
type TextOf = (env: string) => string | undefined;

interface Setting {
  env: `WSOPS_${string}`;
  /** Turns the variable's text into the value. Its messages follow the name: "must be ...; got ...". */
  schema: z.ZodType<unknown, string>;
  /** The text used when the variable is unset or empty; none: the setting stays unset. */
  default?: string | ((text: TextOf) => string);
  /** The default as the README shows it, when it is not the plain text above. */
  defaultDoc?: string;
  /** What it means, in the README's words (Markdown). */
  doc: string;
  /** How its value is shown in summaries: a secret never, an address without its password. */
  show?: 'secret' | 'url';
}

const OPENSSL = 'Make one with `openssl rand -hex 32`.';

// ---- Kinds of value. Each says, in its message, what a right value looks like. ----

function wholeNumber(min: number, max: number) {
  const rule = `must be a whole number from ${min} to ${max}`;
  return z
    .string()
    .trim()
    .regex(/^\d+$/, { error: (issue) => `${rule}; got "${issue.input}"` })
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, { error: (issue) => `${rule}; got ${issue.input}` })
        .max(max, { error: (issue) => `${rule}; got ${issue.input}` }),
    );
}

/** Comma-separated CIDR ranges, IPv4 or IPv6 (empty: none), in their canonical form. */
const cidrList = z.string().transform((raw, ctx) => {
  try {
    return canonicalCidrs([raw]);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: `must be comma-separated CIDR ranges: ${(error as Error).message}` });
    return z.NEVER;
  }
});

const TRUE = ['1', 'true', 'yes', 'on'] as const;
const FALSE = ['0', 'false', 'no', 'off'] as const;
const trueOrFalse = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.enum([...TRUE, ...FALSE], { error: (issue) => `must be true or false; got "${issue.input}"` }))
  .transform((v) => (TRUE as readonly string[]).includes(v));

const onOrOff = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.enum(['on', 'off'], { error: (issue) => `must be on or off; got "${issue.input}"` }))
  .transform((v) => v === 'on');

function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  const list = `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;
  return z.enum(values, { error: (issue) => `must be ${list}; got "${String(issue.input)}"` });
}

/** `postgresql:` is spelled `postgres:` from here on. The message never shows a password. */
const databaseUrl = z
  .string()
  .trim()
  .regex(/^(sqlite:.+|postgres(ql)?:\/\/.+)$/, {
    error: (issue) => `must be sqlite:PATH or postgres://USER@HOST:PORT/DB; got "${redactUrl(String(issue.input))}"`,
  })
  .transform((url) => url.replace(/^postgresql:/, 'postgres:'));

const redisUrl = z
  .string()
  .trim()
  .regex(/^rediss?:\/\/.+/, { error: (issue) => `must start with redis:// or rediss://; got "${redactUrl(String(issue.input))}"` });

const httpUrl = z
  .url({ protocol: /^https?$/, error: (issue) => `must be an http(s) URL such as https://wsops.example.com; got "${issue.input}"` })
  .transform((url) => url.replace(/\/+$/, ''));

/** Where failure alerts are mailed from: `smtp://` (STARTTLS when offered) or `smtps://` (TLS from the start). */
const smtpUrl = z
  .string()
  .trim()
  .regex(/^smtps?:\/\/[^/?#\s]+(:\d+)?\/?(\?.*)?$/, {
    error: (issue) =>
      `must be smtp://USER:PASSWORD@HOST:587 (STARTTLS) or smtps://USER:PASSWORD@HOST:465 (TLS), user and password URL-encoded; got "${redactUrl(String(issue.input))}"`,
  })
  .refine((url) => URL.canParse(url), {
    error: (issue) => `is not a valid URL (encode a special character in the password as %XX); got "${redactUrl(String(issue.input))}"`,
  });

/** A bare address (`alerts@example.com`) or a name and address (`wsops <alerts@example.com>`). */
const mailFrom = z
  .string()
  .trim()
  .regex(/^(?:[^<>@\n]*<[^<>@\s]+@[^<>@\s]+\.[^<>@\s]+>|[^<>@\s]+@[^<>@\s]+\.[^<>@\s]+)$/, {
    error: (issue) => `must be an email address such as alerts@example.com or "wsops <alerts@example.com>"; got "${issue.input}"`,
  });

const host = z
  .string()
  .trim()
  .regex(/^[^\s/]+$/, { error: (issue) => `must be an interface address or host name such as 127.0.0.1; got "${issue.input}"` });

/** Signs cursors and keys the encryption of the webhook signing secrets. Never echoed. */
const serverSecret = z.string().min(32, { error: () => `must be at least 32 characters. ${OPENSSL}` });

/**
 * The operator token guards every domain action, so a guessable one is refused at start: at
 * least 32 characters, at least 8 distinct ones (which also refuses one repeated character),
 * no whitespace (a Bearer token is one word), at most 512 characters. Never echoed.
 */
export const OPERATOR_TOKEN_MIN_LENGTH = 32;
/** Fewer distinct characters than this is a pattern, not a secret (`abababab...`, `12341234...`). */
export const OPERATOR_TOKEN_MIN_DISTINCT = 8;
const operatorToken = z
  .string()
  .min(OPERATOR_TOKEN_MIN_LENGTH, {
    error: (issue) => `must be at least ${OPERATOR_TOKEN_MIN_LENGTH} characters; got ${String(issue.input).length}. ${OPENSSL}`,
    abort: true,
  })
  .max(512, { error: () => `must be at most 512 characters. ${OPENSSL}`, abort: true })
  .regex(/^\S+$/, { error: () => `must not contain whitespace. ${OPENSSL}`, abort: true })
  .refine((token) => new Set(token).size >= OPERATOR_TOKEN_MIN_DISTINCT, {
    error: (issue) =>
      `has no real entropy: only ${new Set(String(issue.input)).size} distinct character(s), at least ${OPERATOR_TOKEN_MIN_DISTINCT} are required. ${OPENSSL}`,
  });

// ---- The settings, in the order the README lists them. ----

export const SETTINGS = {
  databaseUrl: {
    env: 'WSOPS_DATABASE_URL',
    schema: databaseUrl,
    default: 'sqlite:./data/wsops.db',
    doc: '`sqlite:PATH` (embedded, WAL) or `postgres://...` (production; several processes may share it; on the same machine, its socket: `postgres://USER@localhost/DB?host=/var/run/postgresql`).',
    show: 'url',
  },
  port: { env: 'WSOPS_PORT', schema: wholeNumber(0, 65535), default: '8080', doc: 'TCP port of `wsops serve`.' },
  host: { env: 'WSOPS_HOST', schema: host, default: '127.0.0.1', doc: 'Interface to listen on (`0.0.0.0` for all).' },
  internalPort: {
    env: 'WSOPS_INTERNAL_PORT',
    schema: wholeNumber(0, 65535),
    doc: 'Port of the internal listener: the operator API `/internal/v1`, `/metrics`, `/readyz`, `/healthz`. Unset: no internal listener (the public one never serves them). `0` picks a free port.',
  },
  internalHost: {
    env: 'WSOPS_INTERNAL_HOST',
    schema: host,
    default: '127.0.0.1',
    doc: 'Interface of the internal listener. Keep it on loopback or a private network; it is never meant to be public.',
  },
  baseUrl: {
    env: 'WSOPS_BASE_URL',
    schema: httpUrl,
    default: (text) => `http://localhost:${text('WSOPS_PORT')}`,
    defaultDoc: '`http://localhost:` and `WSOPS_PORT`',
    doc: 'Public base address, used in the OpenAPI `servers` entry, console links and printed links. Its host name is also the site of the console admins’ passkeys: changing it makes their passkeys unusable (they sign in with a code and add them again).',
  },
  env: {
    env: 'WSOPS_ENV',
    schema: oneOf(['live', 'test']),
    default: 'test',
    doc: '`live` or `test`: the environment this deployment serves. Only keys of this environment authenticate.',
  },
  secret: {
    env: 'WSOPS_SECRET',
    schema: serverSecret,
    defaultDoc: '(generated)',
    doc: 'At least 32 characters (`openssl rand -hex 32`); signs cursors and encrypts webhook signing secrets at rest. Required when `WSOPS_ENV=live`. In test, when unset, one is generated and stored in the database (a warning is logged: anyone with the database file can then read the signing secrets).',
    show: 'secret',
  },
  allowPrivateWebhooks: {
    env: 'WSOPS_ALLOW_PRIVATE_WEBHOOKS',
    schema: trueOrFalse,
    default: 'false',
    doc: 'Test and development only: lets a webhook URL be `http`, any port, loopback. Refused when `WSOPS_ENV=live`.',
  },
  demo: {
    env: 'WSOPS_DEMO',
    schema: trueOrFalse,
    default: 'true',
    doc: 'On an empty database, `serve` creates a demo workspace with seeded data and prints a key. Set `false` in production.',
  },
  redisUrl: {
    env: 'WSOPS_REDIS_URL',
    schema: redisUrl,
    doc: '`redis://...`: shared store of the rate limits (per key) and of the failure throttle (failed API keys and operator tokens per address, console passwords) for several API processes; checked by `/readyz`. Unset: kept in process memory.',
    show: 'url',
  },
  smtpUrl: {
    env: 'WSOPS_SMTP_URL',
    schema: smtpUrl,
    doc: 'Mail server of the webhook failure alerts (mailed to the workspace’s console admins and its alert recipients): `smtps://USER:PASSWORD@HOST:465` (TLS from the start) or `smtp://USER:PASSWORD@HOST:587` (STARTTLS when the server offers it; add `?requireTLS=true` to refuse one that does not). User and password URL-encoded. Needs `WSOPS_ALERT_FROM`. Unset: alerts are shown in the console only. Its password is never shown or logged.',
    show: 'url',
  },
  alertFrom: {
    env: 'WSOPS_ALERT_FROM',
    schema: mailFrom,
    doc: 'Sender of the failure alert mails: `alerts@example.com` or `wsops <alerts@example.com>`. Required with `WSOPS_SMTP_URL`.',
  },
  alertFailingAfterMinutes: {
    env: 'WSOPS_ALERT_FAILING_AFTER_MINUTES',
    schema: wholeNumber(1, 10_080),
    default: '60',
    doc: 'An endpoint whose deliveries have all failed for this long (its first failure in a row older than this) gets the "failing" alert (1 to 10080 minutes). Lower it in a test to see an alert without waiting an hour.',
  },
  rateLimitPerSecond: {
    env: 'WSOPS_RATE_LIMIT_PER_SECOND',
    schema: wholeNumber(1, 1_000_000),
    default: '50',
    doc: 'Per-key token bucket refill rate (requests/second).',
  },
  rateLimitBurst: { env: 'WSOPS_RATE_LIMIT_BURST', schema: wholeNumber(1, 1_000_000), default: '100', doc: 'Per-key token bucket size.' },
  maxKeys: {
    env: 'WSOPS_MAX_KEYS',
    schema: wholeNumber(1, 100_000),
    default: '20',
    doc: 'Plan limit: unrevoked, unexpired keys per workspace (both environments).',
  },
  operatorToken: {
    env: 'WSOPS_OPERATOR_TOKEN',
    schema: operatorToken,
    doc: 'Bearer token for the internal `/internal/v1` API; that API refuses every request while unset. At least 32 characters and 8 distinct ones (`openssl rand -hex 32`); 10 failed tokens from one address are answered 401, then every request from it 429 until a failure refills (one every 6 s).',
    show: 'secret',
  },
  deliveryLeaseSeconds: {
    env: 'WSOPS_DELIVERY_LEASE_SECONDS',
    schema: wholeNumber(11, 3600),
    default: '30',
    doc: "How long a worker reserves a claimed delivery (11 to 3600; above the 10 s attempt timeout). A killed worker's deliveries are retried after it.",
  },
  deliveryRetentionDays: {
    env: 'WSOPS_DELIVERY_RETENTION_DAYS',
    schema: wholeNumber(1, 3650),
    default: '30',
    doc: 'Delivery history (attempts, finished jobs, deliveries held for an endpoint disabled for failures) older than this is pruned hourly (1 to 3650).',
  },
  eventRetentionDays: {
    env: 'WSOPS_EVENT_RETENTION_DAYS',
    schema: wholeNumber(1, 3650),
    default: '30',
    doc: 'How long the events API (`GET /api/v1/events`) keeps an event (1 to 3650 days); older ones are pruned hourly (unless a delivery still owes them), and a `since` or cursor from before this horizon is refused (400 `events_beyond_retention`).',
  },
  deletionRetentionDays: {
    env: 'WSOPS_DELETION_RETENTION_DAYS',
    schema: wholeNumber(30, 3650),
    default: '90',
    doc: 'How long the deletions feed (`GET /api/v1/{register}/deletions`) keeps a tombstone (30 to 3650 days); older ones are pruned hourly, and a `since` or cursor from before this horizon is refused (400 `deletions_beyond_retention`: walk the list in full).',
  },
  /** Whole-request deadline (headers and body), ms. */
  requestTimeoutMs: {
    env: 'WSOPS_REQUEST_TIMEOUT_MS',
    schema: wholeNumber(100, 30_000),
    default: '30000',
    doc: 'Deadline for receiving a whole request, headers and body (100 to 30000). A slower client gets 408 and its connection is closed.',
  },
  /** Deadline for the request headers, ms (at most requestTimeoutMs). */
  headersTimeoutMs: {
    env: 'WSOPS_HEADERS_TIMEOUT_MS',
    schema: wholeNumber(100, 30_000),
    // A request deadline that is not a number is reported on its own; this default then stays 10000.
    default: (text) => String(Math.min(10_000, Number(text('WSOPS_REQUEST_TIMEOUT_MS')) || 10_000)),
    defaultDoc: '`10000`, or `WSOPS_REQUEST_TIMEOUT_MS` if lower',
    doc: 'Deadline for receiving the request headers (100 to 30000, at most `WSOPS_REQUEST_TIMEOUT_MS`).',
  },
  /** How long an idle keep-alive connection is held open, ms. */
  keepAliveTimeoutMs: {
    env: 'WSOPS_KEEP_ALIVE_TIMEOUT_MS',
    schema: wholeNumber(100, 120_000),
    default: '5000',
    doc: 'How long an idle keep-alive connection stays open between requests (100 to 120000).',
  },
  maxConnections: {
    env: 'WSOPS_MAX_CONNECTIONS',
    schema: wholeNumber(1, 1_000_000),
    default: '10000',
    doc: 'Open connections the server accepts at once (1 to 1000000); more are closed on arrival. Keep it below `ulimit -n`.',
  },
  /** Megabytes of the SQLite file the read connection maps (0: plain reads). */
  sqliteMmapMb: {
    env: 'WSOPS_SQLITE_MMAP_MB',
    schema: wholeNumber(0, 2047),
    default: '2047',
    doc: "SQLite only: megabytes of the database file the read connection maps into memory (0 to 2047, SQLite's ceiling; 0 reads pages with read calls). A page of 100 records reads about 25 database pages at random places; mapped, each costs no read call and no copy. Mapped pages are the kernel's file cache: `top` counts them in RES (as shared), but they are not the process's own memory and the kernel reclaims them under pressure.",
  },
  /** Failed authentications per client address per minute before every request from it is refused. */
  authFailuresPerMinute: {
    env: 'WSOPS_AUTH_FAILURES_PER_MINUTE',
    schema: wholeNumber(1, 1_000_000),
    default: '20',
    doc: 'Failed authentications (401) allowed per client address per minute (a bucket of this size refilling over a minute). Once spent, every request from the address gets 429 until it refills. Shared through `WSOPS_REDIS_URL` when set.',
  },
  /** Keep what authentication reads per key in process memory between requests (ADR 14). */
  keyCache: {
    env: 'WSOPS_KEY_CACHE',
    schema: onOrOff,
    default: 'on',
    doc: '`on` or `off`. On: each API process keeps the keys it has used in memory (at most 10,000, each reread after 5 s) and every request only checks that nothing changed since (SQLite: a version stamp; PostgreSQL: one extra `LISTEN` connection per API process). Any change that affects a key, by any process or plain SQL, is seen by the next request. Off: every request reads its key from the database.',
  },
  /** Reverse proxies whose X-Forwarded-For is believed (empty: the TCP peer is the client). */
  trustedProxies: {
    env: 'WSOPS_TRUSTED_PROXIES',
    schema: cidrList,
    default: '',
    doc: 'Comma-separated CIDR ranges (IPv4 or IPv6, e.g. `10.0.0.0/8,::1`) of the reverse proxies in front of wsops. The client address (used by every throttle, key IP allowlist, last-use record and log line) is then read from `X-Forwarded-For` through these hops only; from any other peer the header is ignored. Each entry must be an IP address (a port such as `:8080` or `[::1]:443` is dropped); one that is not (`unknown`, a host name) leaves the request with the address of the proxy that passed it on, logged once. Empty: the TCP peer is the client.',
  },
  logLevel: {
    env: 'WSOPS_LOG_LEVEL',
    schema: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    default: 'info',
    doc: '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`.',
  },
} as const satisfies Record<string, Setting>;

type Settings = typeof SETTINGS;
type ValueOf<S extends { schema: z.ZodType }> = z.output<S['schema']>;

/** The settings in force: one property per entry of SETTINGS, unset ones (no default) `undefined`. */
export type Config = {
  -readonly [K in keyof Settings]: Settings[K] extends { default: unknown } ? ValueOf<Settings[K]> : ValueOf<Settings[K]> | undefined;
};

/** Rules between settings, checked once each setting is valid on its own. Each returns its refusal, or nothing. */
const CROSS_RULES: readonly ((c: Config) => string | undefined)[] = [
  (c) =>
    c.env === 'live' && c.secret === undefined
      ? 'WSOPS_SECRET is required when WSOPS_ENV=live: without it the secret that encrypts the webhook signing secrets would be stored in the database beside them. Make one with `openssl rand -hex 32`, keep it in your secret store, and set WSOPS_SECRET to it.'
      : undefined,
  (c) =>
    c.env === 'live' && c.allowPrivateWebhooks
      ? 'WSOPS_ALLOW_PRIVATE_WEBHOOKS is for test and development only; it is refused when WSOPS_ENV=live. Unset it (or set WSOPS_ENV=test).'
      : undefined,
  (c) =>
    c.internalPort !== undefined && c.internalPort !== 0 && c.internalPort === c.port
      ? `WSOPS_INTERNAL_PORT must differ from WSOPS_PORT (both are ${c.port})`
      : undefined,
  (c) =>
    c.smtpUrl !== undefined && c.alertFrom === undefined
      ? 'WSOPS_ALERT_FROM is required with WSOPS_SMTP_URL: set the sender of the failure alert mails, such as alerts@example.com'
      : undefined,
  (c) =>
    c.headersTimeoutMs > c.requestTimeoutMs
      ? `WSOPS_HEADERS_TIMEOUT_MS (${c.headersTimeoutMs}) must not exceed WSOPS_REQUEST_TIMEOUT_MS (${c.requestTimeoutMs}): the headers are part of the request`
      : undefined,
];

type Entry = [key: keyof Settings, setting: Setting];
const ENTRIES = Object.entries(SETTINGS) as Entry[];

/** One setting as it is in force, for the start-up log and `wsops status`. */
export interface SettingInForce {
  env: string;
  /** The value as read (or its default), a secret hidden and an address without its password; `(unset)` when unset. */
  value: string;
  from: 'environment' | 'default' | 'unset';
}

/**
 * Reads every setting from `source` (the process environment by default). A variable set to the
 * empty string counts as unset. Every setting that is wrong is reported at once, one line each.
 */
export function readSettings(source: NodeJS.ProcessEnv = process.env): { config: Config; inForce: SettingInForce[] } {
  const set = (env: string): string | undefined => (source[env] === '' ? undefined : source[env]);
  const byEnv = new Map(ENTRIES.map(([, s]) => [s.env as string, s]));
  const text: TextOf = (env) => {
    const s = byEnv.get(env);
    const d = s?.default;
    return set(env) ?? (typeof d === 'function' ? d(text) : d);
  };
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  const inForce: SettingInForce[] = [];
  for (const [key, s] of ENTRIES) {
    const raw = text(s.env);
    inForce.push({
      env: s.env,
      value: raw === undefined ? '(unset)' : s.show === 'secret' ? '(set, hidden)' : s.show === 'url' ? redactUrl(raw) : raw,
      from: set(s.env) !== undefined ? 'environment' : raw === undefined ? 'unset' : 'default',
    });
    if (raw === undefined) {
      values[key] = undefined;
      continue;
    }
    const parsed = s.schema.safeParse(raw);
    if (parsed.success) values[key] = parsed.data;
    // A default derived from a setting already refused would only repeat that refusal.
    else if (!(set(s.env) === undefined && typeof s.default === 'function' && problems.length)) {
      problems.push(`${s.env} ${parsed.error.issues[0]?.message ?? 'is not valid'}`);
    }
  }
  if (problems.length) throw new ConfigError(problems.join('\n'));
  const config = values as Config;
  const refusals = CROSS_RULES.map((rule) => rule(config)).filter((r) => r !== undefined);
  if (refusals.length) throw new ConfigError(refusals.join('\n'));
  return { config, inForce };
}

/**
 * Settings a release no longer reads: still accepted (in the environment and in `.env`), so a
 * deployment that sets one keeps starting after an upgrade, and `serve` warns that it is unused.
 */
export const RETIRED_SETTINGS: Readonly<Record<string, string>> = {
  WSOPS_PAGE_THREADS:
    'list pages are read on the event loop (ADR 25); run more API processes (wsops serve --processes N) to use more cores',
};

export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  return readSettings(source).config;
}

/** A database address given elsewhere (`name` is what the operator set, for the message), checked like WSOPS_DATABASE_URL. */
export function checkDatabaseUrl(name: string, url: string): string {
  const parsed = databaseUrl.safeParse(url);
  if (!parsed.success) throw new ConfigError(`${name} ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}

/** The README's settings table, generated from SETTINGS (`npm run readme-settings`). */
export function settingsTable(): string {
  const rows = ENTRIES.map(([, s]) => {
    const shown = s.defaultDoc ?? (typeof s.default === 'string' ? `\`${s.default}\`` : '(unset)');
    return `| \`${s.env}\` | ${shown} | ${s.doc} |`;
  });
  return ['| Variable | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}
