/**
 * Builds the key cache with the invalidation of the deployment's database (ADR 14; each
 * dialect's `authChanges` in src/store/dialects/). Both make the same promise: a change
 * committed before a request reaches this process is seen by that request, whoever wrote it
 * (another process, this one, plain SQL).
 * - SQLite: the one-row `auth_version` stamp, moved by triggers in every writing transaction;
 *   a moved stamp empties the cache.
 * - PostgreSQL: a LISTEN session; notifications drop the entries they name, each request waits
 *   for the listener's barrier, and the cache is bypassed whenever that session is not established.
 */
import type { Logger } from '../logger.js';
import type { Database } from '../store/database.js';
import { KeyCache } from './key-cache.js';

export function createKeyCache(database: Pick<Database, 'engine'>, enabled: boolean, logger: Logger): KeyCache {
  if (!enabled) return new KeyCache({ trusted: () => false });
  const cache: KeyCache = new KeyCache(database.engine.authChanges((what) => cache.invalidate(what), logger));
  return cache;
}
