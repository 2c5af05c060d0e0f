/**
 * The delivery queue's statements, one function each (after graphile-worker's `src/sql/*`):
 * claim due jobs under a lease, complete them (only where the claim still holds the lease),
 * hold and release an endpoint's owed jobs, make jobs due now again. The dispatcher, the
 * endpoint rules and the console share these; no other code writes `delivery_jobs` states.
 */
import { type Kysely, sql } from 'kysely';
import { newId } from '../ids.js';
import type { Dialect } from '../store/database.js';
import { insertBatches } from '../store/insert-batches.js';
import type { DB, DeliveryAttemptsTable } from '../store/schema.js';
import { TEST_EVENT, VERIFICATION_EVENT } from './event-types.js';
import { nextThrottleAt, THROTTLE_SLOTS_PER_SECOND } from './throttle.js';

/** What an attempt needs of a claimed job, read in the same shape by both dialects' claims. */
export interface ClaimedJob {
  id: string;
  workspace_id: string;
  event_id: string;
  endpoint_id: string;
  attempts: number;
  event_type: string;
  event_body: string;
  event_created_at: string;
  url: string;
  endpoint_status: string;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: string | null;
}

export interface Claim {
  /** The token written to `locked_by`; completion requires it. */
  token: string;
  jobs: ClaimedJob[];
}

/** A claimed job's endpoint throttle, read with the claim and moved in its transaction. */
interface ThrottledEndpoint {
  endpoint_id: string;
  max_per_second: number;
  throttle_next_at: string | null;
}

export interface ClaimOptions {
  now: number;
  leaseMs: number;
  /** Most jobs in one claim. */
  limit: number;
  /** Most jobs of one endpoint under a live lease at once, counted across every worker (default: limit). */
  perEndpoint?: number;
}

/** The advisory lock key that serializes claims on PostgreSQL (any constant of our own). */
const CLAIM_LOCK = 727_001;

const CLAIMED_COLUMNS = sql`SELECT c.id, c.workspace_id, c.event_id, c.endpoint_id, c.attempts, ev.type AS event_type, ev.body AS event_body,
  ev.created_at AS event_created_at, e.url, e.status AS endpoint_status, e.secret_ciphertext, e.previous_secret_ciphertext,
  e.previous_secret_expires_at`;
const CLAIMED_JOINS = sql`JOIN events ev ON ev.id = c.event_id JOIN webhook_endpoints e ON e.id = c.endpoint_id`;

/**
 * Claims due jobs under a lease, round-robin across endpoints: every endpoint with due jobs
 * gets its oldest one before any gets a second, and so on, so one endpoint's backlog never
 * hides another's single job. An endpoint takes at most `perEndpoint` jobs under a live lease
 * at once, counted in the table, so the cap holds across worker processes. Which endpoints
 * receive what: an active endpoint every event; an unverified one its verification and test
 * events; a disabled one nothing (its jobs are held).
 *
 * A claimed job's `next_attempt_at` moves to the end of its lease: that is when it is due again
 * if its worker is lost, so "due" alone says what may be claimed, and the jobs in flight are a
 * narrow slice of the due index (at most one lease ahead), cheap to count per endpoint.
 */
export async function claimDueJobs(db: Kysely<DB>, dialect: Dialect, options: ClaimOptions): Promise<Claim> {
  const token = newId('lse');
  const nowIso = new Date(options.now).toISOString();
  const leaseIso = new Date(options.now + options.leaseMs).toISOString();
  const perEndpoint = options.perEndpoint ?? options.limit;
  // Jobs in flight per endpoint, whichever worker holds them (workers share the configured lease).
  const busy = sql`SELECT b.endpoint_id, count(*) AS n FROM delivery_jobs b
    WHERE b.state = 'pending' AND b.next_attempt_at > ${nowIso} AND b.next_attempt_at <= ${leaseIso}
      AND b.lease_until > ${nowIso} AND b.locked_by IS NOT NULL
    GROUP BY b.endpoint_id`;
  // Each endpoint's oldest due jobs, read through its own index range (endpoint, state,
  // created_at): the cost grows with the number of endpoints, never with one endpoint's backlog.
  const oldestDue = (columns: ReturnType<typeof sql>, jobs: ReturnType<typeof sql>, lock: ReturnType<typeof sql>) => sql`
    SELECT ${columns} FROM ${jobs}
    WHERE j.endpoint_id = e.id AND j.state = 'pending' AND j.next_attempt_at <= ${nowIso}
      AND (e.status = 'active' OR j.event_type IN (${VERIFICATION_EVENT}, ${TEST_EVENT}))
    ORDER BY j.created_at, j.id LIMIT ${perEndpoint} ${lock}`;
  // PostgreSQL reads each endpoint's range with LATERAL; SQLite (no LATERAL) with a correlated
  // IN, which it evaluates once per endpoint and resolves by primary key. SQLite is told the
  // index: left to itself it walks the due index (the whole backlog) and sorts (0.5 s a claim
  // at 20,000 due jobs).
  const heads =
    dialect === 'postgres'
      ? sql`webhook_endpoints e CROSS JOIN LATERAL (${oldestDue(sql`j.id, j.endpoint_id, j.created_at`, sql`delivery_jobs j`, sql`FOR UPDATE OF j SKIP LOCKED`)}) d`
      : sql`webhook_endpoints e JOIN delivery_jobs d
          ON d.id IN (${oldestDue(sql`j.id`, sql`delivery_jobs j INDEXED BY delivery_jobs_endpoint_state`, sql``)})`;
  // An endpoint's room in this claim: its cap less its jobs in flight; a throttled endpoint
  // (throttle.ts) nothing before its turn, then at most a tenth of a second's worth.
  const free = sql`${perEndpoint} - COALESCE(busy.n, 0)`;
  const burst = sql`CASE WHEN e.max_per_second >= ${THROTTLE_SLOTS_PER_SECOND} THEN e.max_per_second / ${THROTTLE_SLOTS_PER_SECOND} ELSE 1 END`;
  const room = sql`CASE WHEN e.max_per_second IS NULL THEN ${free}
    WHEN e.throttle_next_at > ${nowIso} THEN 0
    WHEN ${burst} < ${free} THEN ${burst} ELSE ${free} END`;
  const due = sql`
    SELECT r.id FROM (
      SELECT d.id, d.created_at, ${room} AS room,
        row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.created_at, d.id) AS rn
      FROM ${heads} LEFT JOIN (${busy}) busy ON busy.endpoint_id = e.id
      WHERE e.status IN ('active', 'unverified')) r
    WHERE r.rn <= r.room
    ORDER BY r.rn, r.created_at, r.id
    LIMIT ${options.limit}`;
  const claim = sql`lease_until = ${leaseIso}, next_attempt_at = ${leaseIso}, locked_by = ${token}, updated_at = ${nowIso}`;
  if (dialect === 'postgres') {
    // One round trip: claim and read. `= ANY(ARRAY(...))` keeps the update on the primary key.
    // Claims are serialized by a transaction-level advisory lock (held for the few milliseconds
    // of the claim), so two workers never both see the same free room of an endpoint.
    // Each endpoint's range must be read in index order whatever the statistics say (stale
    // statistics right after a burst made the planner fetch and sort every pending job); the
    // few small sorts left are priced at 10^10 by `enable_sort = off`, so JIT is off too, or
    // that price alone makes PostgreSQL JIT-compile every claim.
    const result = await db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${CLAIM_LOCK}), set_config('enable_sort', 'off', true), set_config('enable_bitmapscan', 'off', true), set_config('jit', 'off', true)`.execute(
        trx,
      );
      const claimed = await sql<ClaimedJob & ThrottledColumns>`
        WITH claimed AS (
          UPDATE delivery_jobs SET ${claim}
          WHERE id = ANY(ARRAY(${due}))
          RETURNING id, workspace_id, event_id, endpoint_id, attempts)
        ${CLAIMED_COLUMNS}, ${THROTTLE_COLUMNS} FROM claimed c ${CLAIMED_JOINS}`.execute(trx);
      await moveThrottles(trx, claimed.rows, options.now);
      return claimed;
    });
    return { token, jobs: result.rows.map(withoutThrottle) };
  }
  // SQLite: writers are serialized (the claim's UPDATE takes the write lock for the
  // transaction), so claiming, reading and moving the throttles cannot race another worker.
  const jobs = await db.transaction().execute(async (trx) => {
    const claimed = await sql<{ id: string }>`
      UPDATE delivery_jobs SET ${claim}
      WHERE id IN (${due}) RETURNING id`.execute(trx);
    const ids = claimed.rows.map((r) => r.id);
    const rows: (ClaimedJob & ThrottledColumns)[] = [];
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = sql.join(ids.slice(i, i + 500));
      rows.push(
        ...(
          await sql<
            ClaimedJob & ThrottledColumns
          >`${CLAIMED_COLUMNS}, ${THROTTLE_COLUMNS} FROM delivery_jobs c ${CLAIMED_JOINS} WHERE c.id IN (${chunk})`.execute(trx)
        ).rows,
      );
    }
    await moveThrottles(trx, rows, options.now);
    return rows;
  });
  return { token, jobs: jobs.map(withoutThrottle) };
}

type ThrottledColumns = { max_per_second: number | null; throttle_next_at: string | null };
const THROTTLE_COLUMNS = sql`e.max_per_second, e.throttle_next_at`;

function withoutThrottle({ max_per_second: _m, throttle_next_at: _t, ...job }: ClaimedJob & ThrottledColumns): ClaimedJob {
  return job;
}

/** Moves each throttled endpoint's turn on by the jobs this claim took of it (throttle.ts). */
async function moveThrottles(trx: Kysely<DB>, rows: readonly (ClaimedJob & ThrottledColumns)[], now: number): Promise<void> {
  const taken = new Map<string, ThrottledEndpoint & { sent: number }>();
  for (const r of rows) {
    if (r.max_per_second === null) continue;
    const t = taken.get(r.endpoint_id) ?? {
      endpoint_id: r.endpoint_id,
      max_per_second: Number(r.max_per_second),
      throttle_next_at: r.throttle_next_at,
      sent: 0,
    };
    t.sent++;
    taken.set(r.endpoint_id, t);
  }
  for (const t of taken.values()) {
    await trx
      .updateTable('webhook_endpoints')
      .set({ throttle_next_at: nextThrottleAt(t.max_per_second, t.throttle_next_at, t.sent, now) })
      .where('id', '=', t.endpoint_id)
      .execute();
  }
}

/**
 * The earliest turn of a throttled endpoint still to come (epoch ms), or undefined: an idle
 * worker wakes for it rather than sleeping its whole idle interval.
 */
export async function nextThrottleTurn(db: Kysely<DB>, now: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.min('throttle_next_at').as('next'))
    .where('throttle_next_at', '>', new Date(now).toISOString())
    .where('max_per_second', 'is not', null)
    .executeTakeFirst();
  return row?.next ? Date.parse(row.next) : undefined;
}

export interface JobCompletion {
  id: string;
  state: 'pending' | 'succeeded' | 'exhausted';
  attempts: number;
  /** When the next attempt is due (null once the job is finished). */
  nextAttemptAt: string | null;
}

/**
 * Records the outcome of claimed jobs, only where `locked_by` is still this claim's token: a
 * job whose lease expired and was claimed again belongs to the newer claim, and this (older)
 * result is dropped. Returns the ids that were completed.
 */
export async function completeJobs(
  trx: Kysely<DB>,
  dialect: Dialect,
  token: string,
  completions: readonly JobCompletion[],
  now: number,
): Promise<Set<string>> {
  const nowIso = new Date(now).toISOString();
  const done = new Set<string>();
  if (completions.length === 0) return done;
  if (dialect === 'postgres') {
    // One statement whatever the batch size: arrays unnested server-side, not thousands of parameters.
    const rows = await sql<{ id: string }>`
      UPDATE delivery_jobs SET state = v.state, attempts = v.attempts, next_attempt_at = v.next_at, lease_until = NULL,
        locked_by = NULL, updated_at = ${nowIso}
      FROM unnest(${completions.map((u) => u.id)}::text[], ${completions.map((u) => u.state)}::text[],
        ${completions.map((u) => u.attempts)}::int[], ${completions.map((u) => u.nextAttemptAt)}::text[]) AS v(id, state, attempts, next_at)
      WHERE delivery_jobs.id = v.id AND delivery_jobs.locked_by = ${token}
      RETURNING delivery_jobs.id`.execute(trx);
    for (const r of rows.rows) done.add(r.id);
    return done;
  }
  for (let i = 0; i < completions.length; i += 400) {
    const values = sql.join(completions.slice(i, i + 400).map((u) => sql`(${u.id}, ${u.state}, ${u.attempts}, ${u.nextAttemptAt})`));
    const rows = await sql<{ id: string }>`
      WITH v(id, state, attempts, next_at) AS (VALUES ${values})
      UPDATE delivery_jobs SET state = v.state, attempts = CAST(v.attempts AS INTEGER), next_attempt_at = v.next_at,
        lease_until = NULL, locked_by = NULL, updated_at = ${nowIso}
      FROM v WHERE delivery_jobs.id = v.id AND delivery_jobs.locked_by = ${token}
      RETURNING delivery_jobs.id`.execute(trx);
    for (const r of rows.rows) done.add(r.id);
  }
  return done;
}

/** Writes attempt rows (the delivery history), in the transaction that completes their jobs. */
export async function insertAttempts(trx: Kysely<DB>, dialect: Dialect, attempts: readonly DeliveryAttemptsTable[]): Promise<void> {
  if (attempts.length === 0) return;
  if (dialect !== 'postgres') return insertBatches(trx, 'delivery_attempts', attempts);
  // One statement whatever the batch size: arrays unnested server-side, not thousands of parameters.
  const col = <K extends keyof DeliveryAttemptsTable>(k: K) => attempts.map((a) => a[k]);
  await sql`
    INSERT INTO delivery_attempts (id, job_id, workspace_id, event_id, event_type, endpoint_id, attempt, attempted_at,
      status_code, outcome, error_class, latency_ms, response_body, next_attempt_at)
    SELECT * FROM unnest(${col('id')}::text[], ${col('job_id')}::text[], ${col('workspace_id')}::text[], ${col('event_id')}::text[],
      ${col('event_type')}::text[], ${col('endpoint_id')}::text[], ${col('attempt')}::int[], ${col('attempted_at')}::text[],
      ${col('status_code')}::int[], ${col('outcome')}::text[], ${col('error_class')}::text[], ${col('latency_ms')}::int[],
      ${col('response_body')}::text[], ${col('next_attempt_at')}::text[])`.execute(trx);
}

/**
 * Deliveries owed to a disabled endpoint are kept as `held`: out of the `pending` range of the
 * queue index, so claims never walk past a disabled endpoint's backlog, and back to `pending`
 * (due at once) when the endpoint is active again. Both statements use the (state, …) index.
 * Each returns how many jobs it moved.
 */
export async function holdOwedJobs(trx: Kysely<DB>, endpointId: string, at: string): Promise<number> {
  const result = await trx
    .updateTable('delivery_jobs')
    .set({ state: 'held', lease_until: null, locked_by: null, updated_at: at })
    .where('state', '=', 'pending')
    .where('endpoint_id', '=', endpointId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function releaseOwedJobs(trx: Kysely<DB>, endpointId: string, at: string): Promise<number> {
  const result = await trx
    .updateTable('delivery_jobs')
    .set({ state: 'pending', updated_at: at })
    .where('state', '=', 'held')
    .where('endpoint_id', '=', endpointId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Makes jobs due now again, whatever their state (a resend from the console): the next
 * attempt is a new attempt (new delivery id, same event id), numbered after the last. A job
 * whose endpoint is disabled becomes `held` instead (it is sent when the endpoint is active
 * again); a job in flight under a live lease is left alone (its attempt is running). Returns
 * the ids that were made due or held.
 */
export async function makeDueNow(trx: Kysely<DB>, jobIds: readonly string[], now: number): Promise<string[]> {
  if (jobIds.length === 0) return [];
  const nowIso = new Date(now).toISOString();
  const changed: string[] = [];
  for (let i = 0; i < jobIds.length; i += 400) {
    const chunk = jobIds.slice(i, i + 400);
    const rows = await trx
      .updateTable('delivery_jobs')
      .set({
        state: sql<
          'pending' | 'held'
        >`CASE WHEN (SELECT w.status FROM webhook_endpoints w WHERE w.id = delivery_jobs.endpoint_id) = 'disabled'
          THEN 'held' ELSE 'pending' END`,
        next_attempt_at: nowIso,
        lease_until: null,
        locked_by: null,
        updated_at: nowIso,
      })
      .where('id', 'in', chunk)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', nowIso), eb('state', '!=', 'pending')]))
      .returning('id')
      .execute();
    changed.push(...rows.map((r) => r.id));
  }
  return changed;
}
