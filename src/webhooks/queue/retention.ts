import { sql } from '#kysely';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import type { Database } from '../../store/database.js';

/** What this file takes of the services built at start (services.ts). */
export interface RetentionServices {
  config: Config;
  database: Database;
  clock: Clock;
}

const DAY_MS = 86_400_000;

/**
 * Prunes delivery history older than the retention setting: attempts, finished jobs, held
 * deliveries (owed to an endpoint that has stayed disabled for failures that long: what it is
 * owed is kept within the retention, CONTRACT "Webhooks"). Pending deliveries are never pruned.
 * Events go by their own setting (WSOPS_EVENT_RETENTION_DAYS, what the events API serves), and
 * only once no remaining job still needs them.
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
    const finished = await trx
      .deleteFrom('delivery_jobs')
      .where('state', 'in', ['succeeded', 'exhausted'])
      .where('updated_at', '<', cutoff)
      .executeTakeFirst();
    // By the event's time, not the job's: holding and releasing move updated_at.
    const held = await trx.deleteFrom('delivery_jobs').where('state', '=', 'held').where('created_at', '<', cutoff).executeTakeFirst();
    const jobs = { numDeletedRows: finished.numDeletedRows + held.numDeletedRows };
    // Events have their own retention (the events API's, independent of the delivery history);
    // one a remaining delivery still needs is kept for it.
    const eventCutoff = new Date(services.clock() - services.config.eventRetentionDays * DAY_MS).toISOString();
    const events = await trx
      .deleteFrom('events')
      .where('created_at', '<', eventCutoff)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('delivery_jobs').select('id').whereRef('delivery_jobs.event_id', '=', 'events.id'))),
      )
      .executeTakeFirst();
    return { attempts: Number(attempts.numDeletedRows), jobs: Number(jobs.numDeletedRows), events: Number(events.numDeletedRows) };
  });
}
