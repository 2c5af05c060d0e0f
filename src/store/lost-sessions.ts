/** What every pg pool of the process does about sessions the server ends. */
import type pg from 'pg';
import type { Logger } from '../logger.js';

/**
 * A session the server ends (restart, failover, `pg_terminate_backend`) must not crash the
 * process. Without a logger it is replaced silently.
 */
export function heedLostSessions(pool: pg.Pool, logger?: Logger): void {
  const log = logger?.child({ component: 'database' });
  // An idle session makes the pool emit 'error'; the pool drops it and opens another on the next query.
  pool.on('error', (err) => log?.warn({ err: err.message }, 'idle PostgreSQL connection lost; the pool opens another'));
  // A session lost while checked out between two statements (a restart mid-transaction) emits
  // 'error' on its client, which no pool listener hears. The next statement on it fails, and the
  // pool discards it when it is released.
  pool.on('connect', (client) => client.on('error', (err) => log?.debug({ err: err.message }, 'PostgreSQL connection lost while in use')));
}
