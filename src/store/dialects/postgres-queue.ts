/** PostgreSQL's statements of the webhook delivery queue (engine.ts, last block of Adapter; src/webhooks/queue/queue.ts). */
import { sql } from '#kysely';
import type { Adapter } from './engine.js';

/** The advisory lock key that serializes claims (any constant of our own). */
const CLAIM_LOCK = 727_001;

export const postgresQueue: Pick<Adapter, 'announcesJobs' | 'dueHeads' | 'claimJobs' | 'recordOutcomes'> = {
  announcesJobs: true,
  // Each endpoint's range read with LATERAL; a job another claim holds is skipped, not waited for.
  dueHeads: (oldestDue) =>
    sql`webhook_endpoints e CROSS JOIN LATERAL (${oldestDue(sql`j.id, j.endpoint_id, j.created_at`, sql`delivery_jobs j`, sql`FOR UPDATE OF j SKIP LOCKED`)}) d`,
  // One round trip claims and reads; `= ANY(ARRAY(...))` keeps the update on the primary key.
  // Claims are serialized by a transaction-level advisory lock (held for the few milliseconds
  // of the claim), so two workers never both see the same free room of an endpoint.
  // Each endpoint's range must be read in index order whatever the statistics say (stale
  // statistics right after a burst made the planner fetch and sort every pending job); the
  // few small sorts left are priced at 10^10 by `enable_sort = off`, so JIT is off too, or
  // that price alone makes PostgreSQL JIT-compile every claim.
  claimJobs: <R>(
    db: Parameters<Adapter['claimJobs']>[0],
    claim: Parameters<Adapter['claimJobs']>[1],
    after: (trx: typeof db, rows: R[]) => Promise<void>,
  ) =>
    db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${CLAIM_LOCK}), set_config('enable_sort', 'off', true), set_config('enable_bitmapscan', 'off', true), set_config('jit', 'off', true)`.execute(
        trx,
      );
      const { rows } = await sql<R>`
        WITH c AS (
          UPDATE delivery_jobs SET ${claim.set}
          WHERE id = ANY(ARRAY(${claim.due}))
          RETURNING ${sql.join(claim.jobColumns.map((col) => sql.ref(col)))})
        ${claim.columns} FROM c ${claim.joins}`.execute(trx);
      await after(trx, rows);
      return rows;
    }),
  // One statement whatever the batch size, arrays unnested server-side (not thousands of
  // parameters): the jobs still held by the token are completed, and only their attempts written.
  async recordOutcomes(trx, token, completions, attempts, nowIso) {
    if (completions.length === 0) return new Set();
    const col = <K extends keyof (typeof attempts)[number]>(k: K) => attempts.map((a) => a[k]);
    const { rows } = await sql<{ id: string }>`
      WITH done AS (
        UPDATE delivery_jobs SET state = v.state, attempts = v.attempts, next_attempt_at = v.next_at, lease_until = NULL,
          locked_by = NULL, updated_at = ${nowIso}
        FROM unnest(${completions.map((u) => u.id)}::text[], ${completions.map((u) => u.state)}::text[],
          ${completions.map((u) => u.attempts)}::int[], ${completions.map((u) => u.nextAttemptAt)}::text[]) AS v(id, state, attempts, next_at)
        WHERE delivery_jobs.id = v.id AND delivery_jobs.locked_by = ${token}
        RETURNING delivery_jobs.id),
      written AS (
        INSERT INTO delivery_attempts (id, job_id, workspace_id, event_id, event_type, endpoint_id, attempt, attempted_at,
          status_code, outcome, error_class, latency_ms, response_body, next_attempt_at)
        SELECT a.* FROM unnest(${col('id')}::text[], ${col('job_id')}::text[], ${col('workspace_id')}::text[], ${col('event_id')}::text[],
          ${col('event_type')}::text[], ${col('endpoint_id')}::text[], ${col('attempt')}::int[], ${col('attempted_at')}::text[],
          ${col('status_code')}::int[], ${col('outcome')}::text[], ${col('error_class')}::text[], ${col('latency_ms')}::int[],
          ${col('response_body')}::text[], ${col('next_attempt_at')}::text[])
          AS a(id, job_id, workspace_id, event_id, event_type, endpoint_id, attempt, attempted_at, status_code, outcome, error_class,
            latency_ms, response_body, next_attempt_at)
        WHERE a.job_id IN (SELECT id FROM done))
      SELECT id FROM done`.execute(trx);
    return new Set(rows.map((r) => r.id));
  },
};
