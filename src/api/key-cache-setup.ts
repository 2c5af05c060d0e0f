/**
 * Builds the key cache with the invalidation of the deployment's database (ADR 14). Both make
 * the same promise: a change committed before a request reaches this process is seen by that
 * request, whoever wrote it (another process, this one, plain SQL).
 * - SQLite: the one-row `auth_version` stamp, moved by triggers in every writing transaction,
 *   read with one prepared statement on the read connection (a new read sees every committed
 *   write of every process), once for the requests that arrive together; a moved stamp empties
 *   the cache.
 * - PostgreSQL: an `AuthListener` session; notifications drop the entries they name, each
 *   request waits for the listener's barrier (shared by the requests that arrive together), and
 *   the cache is bypassed whenever that session is not established.
 */
import type SQLite from 'better-sqlite3';
import type { Logger } from '../logger.js';
import { AuthListener } from '../store/auth-listener.js';
import type { Database } from '../store/database.js';
import { KeyCache } from './key-cache.js';

export function createKeyCache(database: Database, databaseUrl: string, enabled: boolean, logger: Logger): KeyCache {
  if (!enabled) return new KeyCache({ trusted: () => false });
  let cache: KeyCache;
  const invalidate = (what: string) => cache.invalidate(what);
  if (database.dialect === 'sqlite') {
    cache = new KeyCache({ trusted: versionStampCheck(database, invalidate) });
  } else {
    const listener = new AuthListener(databaseUrl, invalidate, logger.child({ component: 'key-cache' }));
    cache = new KeyCache({ trusted: () => listener.barrier(), close: () => listener.close() });
  }
  return cache;
}

/**
 * True when the stamp could be read; empties the cache first whenever it moved.
 *
 * One read serves every request that asked since the last one. A read costs 20–25 µs on a
 * 2-core VM (a read transaction takes and releases WAL locks with system calls), as much as the
 * rest of `/api/v1/scopes`. The read runs in the event loop's check phase (setImmediate), after
 * the poll phase has parsed every request that arrived together and each has asked: every
 * request sharing the read was received before it, so it sees every commit made before the
 * request was sent. A request that asks after the read waits for the next one.
 */
function versionStampCheck(database: Database, invalidate: (what: string) => void): () => Promise<boolean> {
  const connection = (database.sqliteReader ?? database.sqlite) as SQLite.Database;
  let stamp: SQLite.Statement | undefined;
  let seen: unknown;
  let barrier: Promise<boolean> | undefined;
  const read = (): boolean => {
    try {
      // Prepared on first use: a process started before migration 0014 was applied bypasses
      // the cache (and tries again on the next request) rather than failing every request.
      stamp ??= connection.prepare('SELECT version FROM auth_version WHERE id = 1').pluck();
      const version = stamp.get();
      if (version !== seen) {
        invalidate('*');
        seen = version;
      }
      return true;
    } catch {
      return false;
    }
  };
  return () => {
    barrier ??= new Promise<boolean>((resolve) =>
      setImmediate(() => {
        barrier = undefined;
        resolve(read());
      }),
    );
    return barrier;
  };
}
