import { sql } from '#kysely';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Database } from '../store/database.js';

/** What this file takes of the services built at start (services.ts). */
export interface RetentionServices {
  config: Config;
  database: Database;
  clock: Clock;
}

const DAY_MS = 86_400_000;

/**
 * Prunes delivery history older than the retention setting: attempts, finished jobs, and
 * events that no unfinished job still needs. Pending and held deliveries are never pruned.
 */
export async function pruneDeliveryHistory(services: RetentionServices): Promise<{ attempts: number; jobs: number; events: number }> {
  const cutoff = new Date(services.clock() - services.config.deliveryRetentionDays * DAY_MS).toISOString();
  const db = services.database.db;
  // The chart's hourly rollup (migration 0013) follows the attempts exactly: hours before the
  // cutoff's hour go whole; in the cutoff's own hour, the attempts about to be deleted are
  // subtracted first, so the chart never counts an attempt the history no longer holds.
  const cutoffHour = cutoff.slice(0, 13);
  return db.transaction().execute(async (trx) => {
    await sql`UPDATE delivery_attempt_hours SET attempts = delivery_attempt_hours.attempts - d.n, succeeded = delivery_attempt_hours.succeeded - d.s
      FROM (SELECT endpoint_id, latency_ms, count(*) AS n, sum(CASE WHEN outcome = 'succeeded' THEN 1 ELSE 0 END) AS s
            FROM delivery_attempts WHERE attempted_at >= ${`${cutoffHour}:00:00.000Z`} AND attempted_at < ${cutoff}
            GROUP BY endpoint_id, latency_ms) AS d
      WHERE delivery_attempt_hours.endpoint_id = d.endpoint_id AND delivery_attempt_hours.hour = ${cutoffHour}
        AND delivery_attempt_hours.latency_ms = d.latency_ms`.execute(trx);
    await trx
      .deleteFrom('delivery_attempt_hours')
      .where((eb) => eb.or([eb('hour', '<', cutoffHour), eb('attempts', '<=', 0)]))
      .execute();
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
