import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Database } from '../store/database.js';
import { pruneTombstones } from '../store/tombstones.js';
import { retentionHorizon } from './deletions.js';
import type { CursorCodec } from './list-query.js';

/** What this file takes of the services built at start (services.ts). */
export interface DeletionsRetentionServices {
  config: Config;
  database: Database;
  cursors: CursorCodec;
  clock: Clock;
}

/**
 * Prunes the deletions feed's tombstones older than `WSOPS_DELETION_RETENTION_DAYS`, on the
 * worker's hourly pruning round (src/worker.ts). The feed refuses a `since` before the same
 * horizon, so no consumer is ever served a feed with a pruned gap in it.
 */
export function pruneTombstonesPastRetention(services: DeletionsRetentionServices): Promise<number> {
  return pruneTombstones(services.database.db, retentionHorizon(services, services.clock()));
}
