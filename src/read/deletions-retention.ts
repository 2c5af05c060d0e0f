import type { Services } from '../services.js';
import { pruneTombstones } from '../store/tombstones.js';
import { retentionHorizon } from './deletions.js';

/**
 * Prunes the deletions feed's tombstones older than `WSOPS_DELETION_RETENTION_DAYS`, on the
 * worker's hourly pruning round (src/worker.ts). The feed refuses a `since` before the same
 * horizon, so no consumer is ever served a feed with a pruned gap in it.
 */
export function pruneTombstonesPastRetention(services: Services): Promise<number> {
  return pruneTombstones(services.database.db, retentionHorizon(services, services.clock()));
}
