/**
 * The delivery queue's statements, one function each (after graphile-worker's `src/sql/*`):
 * claim due jobs under a lease, complete them (only where the claim still holds the lease),
 * hold and release an endpoint's owed jobs, make jobs due now again. The dispatcher, the
 * endpoint rules and the console share these; no other code writes `delivery_jobs` states.
 */
import { type Kysely, sql } from '#kysely';
import { newId } from '../../ids.js';
import type { Adapter } from '../../store/database.js';
import type { JobCompletion } from '../../store/dialects/engine.js';
import type { DB, DeliveryAttemptsTable } from '../../store/schema.js';
import { TEST_EVENT, VERIFICATION_EVENT } from '../events/event-types.js';
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
  /** 1: the Standard Webhooks headers go beside X-Service-Signature. */
  standard_webhooks: number;
  /** A broker destination's sealed password and settings (migration 0041). */
  destination_secret_ciphertext: string | null;
  exchange: string | null;
  routing_key: string | null;
  subject: string | null;
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

/** What the claim reads of the job row itself (the rest through CLAIMED_JOINS). */
const CLAIMED_JOB_COLUMNS = ['id', 'workspace_id', 'event_id', 'endpoint_id', 'attempts'] as const;
const CLAIMED_COLUMNS = sql`SELECT c.id, c.workspace_id, c.event_id, c.endpoint_id, c.attempts, ev.type AS event_type, ev.body AS event_body,
  ev.created_at AS event_created_at, e.url, e.status AS endpoint_status, e.secret_ciphertext, e.previous_secret_ciphertext,
  e.previous_secret_expires_at, e.standard_webhooks, e.destination_secret_ciphertext, e.exchange, e.routing_key, e.subject`;
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
export async function claimDueJobs(db: Kysely<DB>, adapter: Adapter, options: ClaimOptions): Promise<Claim> {
  const token = newId('lse');
  const nowIso = new Date(options.now).toISOString();
  const leaseIso = new Date(options.now + options.leaseMs).toISOString();
  const perEndpoint = options.perEndpoint ?? options.limit;
  // Jobs in flight per endpoint, whichever worker holds them (workers share the configured lease).
  // A claimed job's next attempt is its lease's end. Another worker may have claimed after this
  // one read the time (this one then waited for its turn to claim), so its leases end later than
  // ours would: the window reaches a whole lease further, or their jobs would not count.
  const inFlightUntil = new Date(options.now + 2 * options.leaseMs).toISOString();
  const busy = sql`SELECT b.endpoint_id, count(*) AS n FROM delivery_jobs b
    WHERE b.state = 'pending' AND b.next_attempt_at > ${nowIso} AND b.next_attempt_at <= ${inFlightUntil}
      AND b.lease_until > ${nowIso} AND b.locked_by IS NOT NULL
    GROUP BY b.endpoint_id`;
  // Each endpoint's oldest due jobs, read through its own index range (endpoint, state,
  // created_at): the cost grows with the number of endpoints, never with one endpoint's backlog.
  const oldestDue = (columns: ReturnType<typeof sql>, jobs: ReturnType<typeof sql>, lock: ReturnType<typeof sql>) => sql`
    SELECT ${columns} FROM ${jobs}
    WHERE j.endpoint_id = e.id AND j.state = 'pending' AND j.next_attempt_at <= ${nowIso}
      AND (e.status = 'active' OR j.event_type IN (${VERIFICATION_EVENT}, ${TEST_EVENT}))
    ORDER BY j.created_at, j.id LIMIT ${perEndpoint} ${lock}`;
  const heads = adapter.dueHeads(oldestDue);
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
  const rows = await adapter.claimJobs<ClaimedJob & ThrottledColumns>(
    db,
    { due, set: claim, jobColumns: CLAIMED_JOB_COLUMNS, columns: sql`${CLAIMED_COLUMNS}, ${THROTTLE_COLUMNS}`, joins: CLAIMED_JOINS },
    (trx, claimed) => moveThrottles(trx, claimed, options.now),
  );
  return { token, jobs: rows.map(withoutThrottle) };
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

export type { JobCompletion };

/**
 * Records the outcome of claimed jobs and their attempt rows (the delivery history), only
 * where `locked_by` is still this claim's token: a job whose lease expired and was claimed
 * again belongs to the newer claim, and this (older) result and its attempt are dropped.
 * Returns the ids that were completed. One statement on PostgreSQL, two on SQLite.
 */
export function recordOutcomes(
  trx: Kysely<DB>,
  adapter: Adapter,
  token: string,
  completions: readonly JobCompletion[],
  attempts: readonly DeliveryAttemptsTable[],
  now: number,
): Promise<Set<string>> {
  return adapter.recordOutcomes(trx, token, completions, attempts, new Date(now).toISOString());
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
