/** SQLite's statements of the webhook delivery queue (engine.ts, last block of Adapter; src/webhooks/queue/queue.ts). */
import { sql } from '#kysely';
import { insertBatches } from '../insert-batches.js';
import type { Adapter } from './engine.js';

/** Rows per statement, under SQLite's limit of bound parameters. */
const CHUNK = 400;

export const sqliteQueue: Pick<Adapter, 'announcesJobs' | 'dueHeads' | 'claimJobs' | 'recordOutcomes'> = {
  announcesJobs: false,
  // No LATERAL: a correlated IN, which SQLite evaluates once per endpoint and resolves by
  // primary key. SQLite is told the index: left to itself it walks the due index (the whole
  // backlog) and sorts, a claim costing more the longer the backlog.
  dueHeads: (oldestDue) => sql`webhook_endpoints e JOIN delivery_jobs d
    ON d.id IN (${oldestDue(sql`j.id`, sql`delivery_jobs j INDEXED BY delivery_jobs_endpoint_state`, sql``)})`,
  // Writers are serialized (the UPDATE takes the write lock for the transaction), so claiming,
  // reading and `after` cannot race another worker.
  claimJobs: <R>(
    db: Parameters<Adapter['claimJobs']>[0],
    claim: Parameters<Adapter['claimJobs']>[1],
    after: (trx: typeof db, rows: R[]) => Promise<void>,
  ) =>
    db.transaction().execute(async (trx) => {
      const claimed = await sql<{ id: string }>`UPDATE delivery_jobs SET ${claim.set} WHERE id IN (${claim.due}) RETURNING id`.execute(trx);
      const ids = claimed.rows.map((r) => r.id);
      const rows: R[] = [];
      for (let i = 0; i < ids.length; i += CHUNK) {
        const chunk = sql.join(ids.slice(i, i + CHUNK));
        rows.push(...(await sql<R>`${claim.columns} FROM delivery_jobs c ${claim.joins} WHERE c.id IN (${chunk})`.execute(trx)).rows);
      }
      await after(trx, rows);
      return rows;
    }),
  async recordOutcomes(trx, token, completions, attempts, nowIso) {
    const done = new Set<string>();
    for (let i = 0; i < completions.length; i += CHUNK) {
      const values = sql.join(completions.slice(i, i + CHUNK).map((u) => sql`(${u.id}, ${u.state}, ${u.attempts}, ${u.nextAttemptAt})`));
      const rows = await sql<{ id: string }>`
        WITH v(id, state, attempts, next_at) AS (VALUES ${values})
        UPDATE delivery_jobs SET state = v.state, attempts = CAST(v.attempts AS INTEGER), next_attempt_at = v.next_at,
          lease_until = NULL, locked_by = NULL, updated_at = ${nowIso}
        FROM v WHERE delivery_jobs.id = v.id AND delivery_jobs.locked_by = ${token}
        RETURNING delivery_jobs.id`.execute(trx);
      for (const r of rows.rows) done.add(r.id);
    }
    await insertBatches(
      trx,
      'delivery_attempts',
      attempts.filter((a) => done.has(a.job_id)),
    );
    return done;
  },
};
