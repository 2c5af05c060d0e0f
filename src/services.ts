import type { Redis } from 'ioredis';
import { CursorCodec } from './api/cursor.js';
import { type FailureThrottle, failureThrottle } from './api/failure-throttle.js';
import type { KeyCache } from './api/key-cache.js';
import { createKeyCache } from './api/key-cache-setup.js';
import { PageReader } from './api/page-threads.js';
import { MemoryRateLimiter, type RateLimiter, RedisRateLimiter } from './api/rate-limit.js';
import { readAheadCurrency } from './api/read-ahead.js';
import { type Clock, systemClock } from './clock.js';
import type { Config } from './config.js';
import { type Logger, silentLogger } from './logger.js';
import { Metrics } from './metrics.js';
import { type Database, openDatabase } from './store/database.js';
import { HotQueries } from './store/hot-queries.js';
import { migrate } from './store/migrations.js';
import { PageQueries } from './store/page-queries.js';
import { pageSessions } from './store/page-sessions.js';
import { RecordStore } from './store/records.js';
import { ensureServerSecret } from './store/settings.js';
import { UsageCounter } from './store/usage.js';
import { SecretBox } from './webhooks/secret-box.js';

/**
 * PostgreSQL sessions for pages, per page thread and on the event loop (README, "Connections").
 * Five keep a thread's pages flowing while one waits; more only queue in PostgreSQL.
 */
const PAGE_SESSIONS = 5;

/** Everything a request or a command needs, built once at start and passed down explicitly. */
export interface Services {
  config: Config;
  database: Database;
  records: RecordStore;
  /** List pages: on page threads once `startPageThreads` ran (serve), else on the event loop. */
  pages: PageReader;
  /**
   * Starts WSOPS_PAGE_THREADS page threads (ADR 16) and resolves once each is ready or failed to
   * start: `wsops serve` runs it before it listens. CLI commands never start them.
   */
  startPageThreads(): Promise<void>;
  /** Prepared statements for the queries on every request. */
  hot: HotQueries;
  /** What authentication reads per key, kept between requests and invalidated across processes (ADR 14). */
  keyCache: KeyCache;
  cursors: CursorCodec;
  /** Encrypts webhook signing secrets at rest. */
  secretBox: SecretBox;
  rateLimiter: RateLimiter;
  /** Failed credentials: API keys and operator tokens per address, console passwords (failure-throttle.ts). */
  failureThrottle: FailureThrottle;
  /** Set when WSOPS_REDIS_URL is: checked by /readyz. */
  redis: Redis | undefined;
  /** This process's Prometheus registry; also the dispatcher's DeliveryObserver. */
  metrics: Metrics;
  /** API requests per key, counted in memory and written once a minute. */
  usage: UsageCounter;
  clock: Clock;
  logger: Logger;
  close(): Promise<void>;
}

export interface ServiceOptions {
  clock?: Clock;
  /** Where the database, dispatcher and scheduler log (default: silent). */
  logger?: Logger;
  /** Skip migrations (they are applied by `wsops migrate` or by the first process). */
  migrate?: boolean;
}

export async function createServices(config: Config, options: ServiceOptions = {}): Promise<Services> {
  const database = openDatabase(config.databaseUrl, options.logger, { sqliteMmapMb: config.sqliteMmapMb });
  try {
    if (options.migrate !== false) await migrate(database);
    const secret = config.secret ?? (await ensureServerSecret(database.db));
    // ioredis loads only in a deployment that uses Redis, not in every CLI command (ADR 21).
    const shared = config.redisUrl ? { url: config.redisUrl, Redis: (await import('ioredis')).Redis } : undefined;
    const rateLimiter = shared
      ? new RedisRateLimiter(shared.Redis, shared.url, config.rateLimitPerSecond, config.rateLimitBurst)
      : new MemoryRateLimiter(config.rateLimitPerSecond, config.rateLimitBurst);
    const hot = new HotQueries(database);
    const redis = shared ? new shared.Redis(shared.url, { maxRetriesPerRequest: 1, lazyConnect: true }) : undefined;
    // Reported by /readyz; an unhandled 'error' event would only be printed by ioredis.
    redis?.on('error', () => {});
    const clock = options.clock ?? systemClock;
    const usage = new UsageCounter(database.db, clock, options.logger);
    // Its PostgreSQL LISTEN session opens at the first authentication, so CLI commands and
    // worker-only processes never open one.
    const keyCache = createKeyCache(database, config.databaseUrl, config.keyCache, options.logger ?? silentLogger);
    const metrics = new Metrics(database, clock);
    metrics.observeKeyCache(keyCache);
    const cursors = new CursorCodec(secret);
    // On PostgreSQL, pages read on the event loop (no page thread, or one still starting) run on
    // generic-plan sessions like a thread's (ADR 18); searches run on the main pool.
    const sessions =
      database.dialect === 'postgres' ? await pageSessions(config.databaseUrl, PAGE_SESSIONS, hot, options.logger) : undefined;
    const pages = new PageReader(
      sessions ? new PageQueries('postgres', sessions.pages, sessions.searches) : new PageQueries(database.dialect, hot),
      cursors,
      options.logger ?? silentLogger,
      readAheadCurrency(database, hot, options.logger ?? silentLogger),
    );
    metrics.observePageThreads(pages);
    return {
      config,
      database,
      hot,
      keyCache,
      records: new RecordStore(database, hot),
      pages,
      // An in-memory SQLite database cannot be opened by a second connection: its pages stay on the event loop.
      async startPageThreads() {
        if (config.databaseUrl === 'sqlite::memory:') return;
        const data = { databaseUrl: config.databaseUrl, sqliteMmapMb: config.sqliteMmapMb, secret, postgresConnections: PAGE_SESSIONS };
        await pages.start(config.pageThreads, data);
      },
      cursors,
      secretBox: new SecretBox(secret),
      rateLimiter,
      failureThrottle: failureThrottle(redis),
      redis,
      metrics,
      usage,
      clock,
      logger: options.logger ?? silentLogger,
      async close() {
        await usage.close().catch((err: unknown) => options.logger?.warn({ err }, 'could not write the last API usage counts'));
        await rateLimiter.close();
        redis?.disconnect();
        await keyCache.close();
        await pages.close();
        await sessions?.close();
        await database.close();
      },
    };
  } catch (err) {
    await database.close();
    throw err;
  }
}
