/**
 * The PostgreSQL sessions that read list pages (ADR 18). A page without a text search has one good plan
 * whatever its values (an ordered scan of the ordering index, or of a filter's), but the plan
 * cache costed the generic plan of `LIMIT $n` and `(updated_at, id) > ($a, $b)` so high that it
 * planned every execution again: about 0.1 ms of the database per page. Those sessions keep the
 * generic plan. A text search's best plan does depend on its words (an ordered scan for a common
 * one, the GIN index for a rare one), so searches keep a plan per execution on sessions of their
 * own, opened on first use.
 */
import type pg from 'pg';
import type { Logger } from '../logger.js';
import { HotQueries } from './hot-queries.js';
import { heedLostSessions } from './lost-sessions.js';
import { pgDriver } from './pg-driver.js';

/**
 * A pool whose every new session runs `SET plan_cache_mode = <mode>` before anything else, and,
 * with the generic plan, `SET jit = off`: a generic plan's cost is estimated for 10% of the
 * register, so a batch of pages (page-batches.ts) came out above `jit_above_cost` and compiled
 * itself on every execution, 24 ms for a statement that runs in 0.25 ms.
 */
async function poolWithPlanCacheMode(
  url: string,
  max: number,
  mode: 'auto' | 'force_generic_plan',
  applicationName: string,
  logger: Logger | undefined,
): Promise<pg.Pool> {
  const { Pool } = pgDriver();
  const settings = mode === 'auto' ? undefined : `SET plan_cache_mode = ${mode}; SET jit = off`;
  const pool = new Pool({
    connectionString: url,
    max,
    // The name tells an operator what each session in pg_stat_activity is for.
    application_name: applicationName,
    // Kept open however long they idle, where pg closes a session idle for 10 s: a new session
    // starts a backend with cold catalog caches and prepares its statements again, and the burst
    // that follows a lull paid for it. In the benchmark, pages right after a 12 s pause went at
    // 891 req/s with p99 450 ms, against 1,479 and p99 80 ms with the sessions kept (issue 9,
    // seventh session). They are few (the pages run one statement at a time), and a session
    // the server ends is replaced (heedLostSessions). Idle, they do not keep the process alive.
    idleTimeoutMillis: 0,
    allowExitOnIdle: true,
    // Awaited by the pool before it hands the new session out, so the settings precede its first
    // page query (a query queued behind another on one client is deprecated in pg 8 and goes in
    // pg 9). A SET, not a startup option, which a pooler such as PgBouncer may refuse; should it
    // fail, pages are only slower.
    ...(settings
      ? {
          onConnect: (client: pg.ClientBase) =>
            client.query(settings).then(
              () => {},
              () => {},
            ),
        }
      : {}),
  });
  heedLostSessions(pool, logger);
  return pool;
}

export interface PageSessions {
  /** Pages without a text search: the generic plan. */
  pages: HotQueries;
  /** Pages with a text search: a plan per execution when PostgreSQL judges it better. */
  searches: HotQueries;
  close(): Promise<void>;
}

/**
 * Up to `max` sessions for pages, and as many for searches unless `searches` is given (the event
 * loop passes its main pool's queries, whose sessions keep PostgreSQL's usual plan choice).
 * Sessions open on first use, so a process that never reads a page never opens one. Without a
 * logger (the tests) lost sessions are replaced silently.
 */
export async function pageSessions(url: string, max: number, searches?: HotQueries, logger?: Logger): Promise<PageSessions> {
  const generic = await poolWithPlanCacheMode(url, max, 'force_generic_plan', 'wsops-pages', logger);
  const auto = searches ? undefined : await poolWithPlanCacheMode(url, max, 'auto', 'wsops-searches', logger);
  return {
    pages: new HotQueries({ dialect: 'postgres', pool: generic }),
    searches: searches ?? new HotQueries({ dialect: 'postgres', pool: auto }),
    close: async () => {
      await Promise.all([generic.end(), auto?.end()]);
    },
  };
}
