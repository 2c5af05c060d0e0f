import type { Redis } from 'ioredis';
import { type Clock, systemClock } from './clock.js';
import type { Config } from './config.js';
import { type FailureThrottle, failureThrottle } from './guards/failure-throttle.js';
import { MemoryRateLimiter, type RateLimiter, RedisRateLimiter } from './guards/rate-limit.js';
import type { KeyCache } from './keys/key-cache.js';
import { createKeyCache } from './keys/key-cache-setup.js';
import { UsageCounter } from './keys/usage.js';
import { type Logger, silentLogger } from './logger.js';
import { Metrics } from './metrics.js';
import { CursorCodec } from './read/list-query.js';
import { PageReader } from './read/pages.js';
import { SecretBox } from './secret-box.js';
import { type Database, type HotQueries, openDatabase } from './store/database.js';
import { migrate } from './store/migrate.js';
import { ensureServerSecret } from './store/settings.js';
import { RecordStore } from './writes/records.js';

/** Everything a request or a command needs, built once at start and passed down explicitly. */
export interface Services {
  config: Config;
  database: Database;
  records: RecordStore;
  /** List pages, with read-ahead of walks (read/pages.ts). */
  pages: PageReader;
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
    const hot = database.engine.hot;
    const redis = shared ? new shared.Redis(shared.url, { maxRetriesPerRequest: 1, lazyConnect: true }) : undefined;
    // Reported by /readyz; an unhandled 'error' event would only be printed by ioredis.
    redis?.on('error', () => {});
    const clock = options.clock ?? systemClock;
    const usage = new UsageCounter(database.db, clock, options.logger);
    // Its PostgreSQL LISTEN session opens at the first authentication, so CLI commands and
    // worker-only processes never open one.
    const keyCache = createKeyCache(database, config.keyCache, options.logger ?? silentLogger);
    const metrics = new Metrics(database, clock);
    metrics.observeKeyCache(keyCache);
    metrics.observeExpiringKeys(clock);
    const cursors = new CursorCodec(secret);
    // The dialect's pages (PostgreSQL opens their sessions on first use) and their read-ahead.
    const queries = database.engine.openPages(options.logger ?? silentLogger);
    const pages = new PageReader(queries, cursors, queries.currency);
    return {
      config,
      database,
      hot,
      keyCache,
      records: new RecordStore(database, hot),
      pages,
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
        pages.close();
        await queries.close();
        await database.close();
      },
    };
  } catch (err) {
    await database.close();
    throw err;
  }
}
