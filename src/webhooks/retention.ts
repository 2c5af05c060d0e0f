import type { Services } from '../services.js';

const DAY_MS = 86_400_000;

/**
 * Prunes delivery history older than the retention setting: attempts, finished jobs, and
 * events that no unfinished job still needs. Pending and held deliveries are never pruned.
 */
export async function pruneDeliveryHistory(services: Services): Promise<{ attempts: number; jobs: number; events: number }> {
  const cutoff = new Date(services.clock() - services.config.deliveryRetentionDays * DAY_MS).toISOString();
  const db = services.database.db;
  return db.transaction().execute(async (trx) => {
    const attempts = await trx.deleteFrom('delivery_attempts').where('attempted_at', '<', cutoff).executeTakeFirst();
    const jobs = await trx
      .deleteFrom('delivery_jobs')
      .where('state', 'in', ['succeeded', 'exhausted'])
      .where('updated_at', '<', cutoff)
      .executeTakeFirst();
    const events = await trx
      .deleteFrom('events')
      .where('created_at', '<', cutoff)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('delivery_jobs').select('id').whereRef('delivery_jobs.event_id', '=', 'events.id'))),
      )
      .executeTakeFirst();
    return { attempts: Number(attempts.numDeletedRows), jobs: Number(jobs.numDeletedRows), events: Number(events.numDeletedRows) };
  });
}
