/**
 * An endpoint's delivery history and the operations on it, for the console and the CLI alike:
 * each event (one delivery job) with its attempts, keyset-paged newest first; resend one
 * delivery now; recover every delivery that failed for good since a time; the held count of a
 * disabled endpoint; the 24 h / 7 d chart; a signed test event. Every function first checks
 * that the endpoint belongs to the workspace (another workspace's id is `not_found`), and
 * every query is bounded by an index of migration 0011 (the history may hold millions of rows).
 */
import { type Kysely, sql } from '#kysely';
import { recordAudit } from '../../audit/audit.js';
import type { Clock } from '../../clock.js';
import { AppError } from '../../errors.js';
import type { Database } from '../../store/database.js';
import type { DB, DeliveryJobsTable, WebhookEndpointsTable } from '../../store/schema.js';
import { SUBSCRIBABLE_EVENTS, TEST_EVENT, VERIFICATION_EVENT } from '../events/event-types.js';
import { emitTestEvent } from '../events/outbox.js';
import { makeDueNow } from './queue.js';

/** What this file takes of the services built at start (services.ts). */
export interface DeliveriesServices {
  database: Database;
  clock: Clock;
}

/** What the history can be filtered by; each maps to one job state. */
export const DELIVERY_OUTCOMES = {
  succeeded: { state: 'succeeded', label: 'Succeeded' },
  failed: { state: 'exhausted', label: 'Failed (every attempt spent)' },
  pending: { state: 'pending', label: 'Pending (waiting or retrying)' },
  held: { state: 'held', label: 'Held (endpoint disabled)' },
} as const satisfies Record<string, { state: DeliveryJobsTable['state']; label: string }>;
export type DeliveryOutcome = keyof typeof DELIVERY_OUTCOMES;

/** Every event type a delivery can carry: the eight subscribable ones, verification and test. */
export const DELIVERY_EVENT_TYPES: readonly string[] = [...SUBSCRIBABLE_EVENTS, VERIFICATION_EVENT, TEST_EVENT];

export const MAX_HISTORY_PAGE = 100;
/** How much of a receiver's answer the history shows (4 KB are kept). */
export const RESPONSE_SNIPPET_CHARS = 300;

export interface DeliveryAttemptView {
  /** `dlv_…`: the X-Service-Delivery header of this attempt. */
  delivery_id: string;
  attempt: number;
  attempted_at: string;
  status_code: number | null;
  outcome: 'succeeded' | 'failed';
  error_class: string | null;
  latency_ms: number;
  response_snippet: string | null;
  /** When the next attempt was scheduled by this one (null after a success or the last attempt). */
  next_attempt_at: string | null;
}

export interface DeliveryEventView {
  job_id: string;
  event_id: string;
  event_type: string;
  state: DeliveryJobsTable['state'];
  attempts_made: number;
  /** When the next attempt is due (pending jobs only). */
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
  /** Newest first. */
  attempts: DeliveryAttemptView[];
}

export interface DeliveryPage {
  deliveries: DeliveryEventView[];
  /** Pass as `before` for the next (older) page; null on the last page. */
  next_before: string | null;
}

export interface DeliveryFilters {
  outcome?: string;
  eventType?: string;
  before?: string;
  limit?: number;
}

async function endpointIn(db: Kysely<DB>, workspaceId: string, endpointId: string): Promise<WebhookEndpointsTable> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('id', '=', endpointId)
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  if (!row)
    throw new AppError('not_found', `no webhook endpoint ${endpointId} in workspace ${workspaceId}; list them with: wsops endpoint list`);
  return row;
}

function refuseDisabled(endpoint: WebhookEndpointsTable, what: string): void {
  if (endpoint.status === 'disabled') {
    throw new AppError('invalid_state', `endpoint ${endpoint.id} is disabled; switch it on first, then ${what}`, {
      rule: 'endpoint_disabled',
    });
  }
}

function encodeCursor(createdAt: string, id: string): string {
  return Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');
}

function decodeCursor(cursor: string): [string, string] {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string') {
      return [value[0], value[1]];
    }
  } catch {
    /* refused below */
  }
  throw new AppError('invalid_cursor', 'the "before" cursor is not one this page produced; start again from the newest deliveries', {
    param: 'before',
  });
}

/** Validates the filters: an unknown outcome or event type is refused, never ignored. */
export function checkDeliveryFilters(filters: DeliveryFilters): {
  state?: DeliveryJobsTable['state'];
  eventType?: string;
  before?: [string, string];
  limit: number;
} {
  let state: DeliveryJobsTable['state'] | undefined;
  if (filters.outcome) {
    if (!Object.hasOwn(DELIVERY_OUTCOMES, filters.outcome)) {
      throw new AppError(
        'invalid_parameter',
        `unknown outcome "${filters.outcome}"; outcomes are: ${Object.keys(DELIVERY_OUTCOMES).join(', ')}`,
        { param: 'outcome' },
      );
    }
    state = DELIVERY_OUTCOMES[filters.outcome as DeliveryOutcome].state;
  }
  if (filters.eventType && !DELIVERY_EVENT_TYPES.includes(filters.eventType)) {
    throw new AppError(
      'invalid_parameter',
      `unknown event type "${filters.eventType}"; event types are: ${DELIVERY_EVENT_TYPES.join(', ')}`,
      { param: 'event_type' },
    );
  }
  const limit = filters.limit ?? 25;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_HISTORY_PAGE) {
    throw new AppError('invalid_parameter', `limit must be a whole number from 1 to ${MAX_HISTORY_PAGE}; got ${limit}`, { param: 'limit' });
  }
  return {
    state,
    eventType: filters.eventType || undefined,
    before: filters.before ? decodeCursor(filters.before) : undefined,
    limit,
  };
}

/**
 * One page of an endpoint's deliveries, newest event first, each with its attempts. Keyset on
 * (created_at, id): a range scan of one 0011 index whatever the depth; no OFFSET, no count.
 */
export async function listDeliveries(
  services: DeliveriesServices,
  workspaceId: string,
  endpointId: string,
  filters: DeliveryFilters = {},
): Promise<DeliveryPage> {
  const f = checkDeliveryFilters(filters);
  const db = services.database.db;
  await endpointIn(db, workspaceId, endpointId);
  let q = db
    .selectFrom('delivery_jobs')
    .select(['id', 'event_id', 'event_type', 'state', 'attempts', 'next_attempt_at', 'created_at', 'updated_at'])
    .where('endpoint_id', '=', endpointId)
    .where('workspace_id', '=', workspaceId);
  if (f.state) q = q.where('state', '=', f.state);
  if (f.eventType) q = q.where('event_type', '=', f.eventType);
  if (f.before) {
    const [createdAt, id] = f.before;
    q = q.where(sql<boolean>`(created_at, id) < (${createdAt}, ${id})`);
  }
  const pageQuery = q
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(f.limit + 1);
  // PostgreSQL must walk the index backwards and stop after one page, whatever its statistics
  // say: right after a burst (no ANALYZE yet) it estimated a few hundred rows for the endpoint
  // and chose a bitmap scan of its whole history plus a sort, growing with the history where
  // index order reads one page. Same remedy as the claim (ADR 6): no sort, no bitmap.
  const jobs = await services.database.engine.inIndexOrder(db, async (trx) => (await trx.executeQuery(pageQuery.compile())).rows);
  const more = jobs.length > f.limit;
  const page = jobs.slice(0, f.limit);
  const attempts = page.length
    ? await db
        .selectFrom('delivery_attempts')
        .select([
          'id',
          'job_id',
          'attempt',
          'attempted_at',
          'status_code',
          'outcome',
          'error_class',
          'latency_ms',
          'response_body',
          'next_attempt_at',
        ])
        .where(
          'job_id',
          'in',
          page.map((j) => j.id),
        )
        .orderBy('attempt', 'desc')
        .orderBy('attempted_at', 'desc')
        .execute()
    : [];
  const byJob = new Map<string, DeliveryAttemptView[]>();
  for (const a of attempts) {
    const list = byJob.get(a.job_id) ?? [];
    list.push({
      delivery_id: a.id,
      attempt: a.attempt,
      attempted_at: a.attempted_at,
      status_code: a.status_code,
      outcome: a.outcome,
      error_class: a.error_class,
      latency_ms: a.latency_ms,
      response_snippet: a.response_body === null ? null : a.response_body.slice(0, RESPONSE_SNIPPET_CHARS),
      next_attempt_at: a.next_attempt_at,
    });
    byJob.set(a.job_id, list);
  }
  const last = page[page.length - 1];
  return {
    deliveries: page.map((j) => ({
      job_id: j.id,
      event_id: j.event_id,
      event_type: j.event_type,
      state: j.state,
      attempts_made: j.attempts,
      next_attempt_at: j.state === 'pending' ? j.next_attempt_at : null,
      created_at: j.created_at,
      updated_at: j.updated_at,
      attempts: byJob.get(j.id) ?? [],
    })),
    next_before: more && last ? encodeCursor(last.created_at, last.id) : null,
  };
}

/** Deliveries kept for a disabled endpoint (state `held`); an index-only count. */
export async function heldCount(services: DeliveriesServices, workspaceId: string, endpointId: string): Promise<number> {
  const db = services.database.db;
  await endpointIn(db, workspaceId, endpointId);
  const { n } = await db
    .selectFrom('delivery_jobs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('endpoint_id', '=', endpointId)
    .where('state', '=', 'held')
    .executeTakeFirstOrThrow();
  return Number(n);
}

export interface ResentDelivery {
  job_id: string;
  event_id: string;
  event_type: string;
  state: 'pending';
  next_attempt_at: string;
}

/**
 * Resends one delivery now: its job becomes pending and due at once (lease cleared) whatever
 * its state, so the worker makes a new attempt with a new delivery id and the same event id.
 * Takes a delivery id (`dlv_…`, any attempt of the job) or the job id. The attempt count is
 * kept: numbering goes on, and a job that had spent its attempts gets this one more only.
 */
export async function resendDelivery(
  services: DeliveriesServices,
  workspaceId: string,
  endpointId: string,
  deliveryOrJobId: string,
  actor = 'cli',
): Promise<ResentDelivery> {
  const db = services.database.db;
  const at = new Date(services.clock()).toISOString();
  return db.transaction().execute(async (trx) => {
    const endpoint = await endpointIn(trx, workspaceId, endpointId);
    let jobId = deliveryOrJobId;
    if (deliveryOrJobId.startsWith('dlv_')) {
      const attempt = await trx
        .selectFrom('delivery_attempts')
        .select('job_id')
        .where('id', '=', deliveryOrJobId)
        .where('endpoint_id', '=', endpointId)
        .where('workspace_id', '=', workspaceId)
        .executeTakeFirst();
      if (!attempt)
        throw new AppError('not_found', `no delivery ${deliveryOrJobId} of endpoint ${endpointId}; list them with: wsops deliveries`);
      jobId = attempt.job_id;
    }
    const job = await trx
      .selectFrom('delivery_jobs')
      .select(['id', 'event_id', 'event_type'])
      .where('id', '=', jobId)
      .where('endpoint_id', '=', endpointId)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
    if (!job) throw new AppError('not_found', `no delivery ${deliveryOrJobId} of endpoint ${endpointId}; list them with: wsops deliveries`);
    refuseDisabled(endpoint, 'resend the delivery');
    // Not while a worker holds it and is attempting it: made due again, another worker would send
    // it beside that attempt, and the attempt's outcome would no longer be recorded. makeDueNow's
    // UPDATE leaves a job under a live lease alone, so a claim between a read and the write cannot
    // slip through.
    if ((await makeDueNow(trx, [job.id], services.clock())).length === 0) {
      throw new AppError(
        'invalid_state',
        `delivery ${job.id} of ${job.event_type} ${job.event_id} is being attempted now; resend it once that attempt is recorded (within seconds)`,
      );
    }
    await recordAudit(trx, {
      workspaceId,
      at,
      actor,
      action: 'delivery.resent',
      target: endpointId,
      detail: { job_id: job.id, event_id: job.event_id, event_type: job.event_type, requested: deliveryOrJobId },
    });
    return { job_id: job.id, event_id: job.event_id, event_type: job.event_type, state: 'pending', next_attempt_at: at };
  });
}

/**
 * Every delivery of the endpoint that failed for good (all attempts spent), of events since
 * `since`, made due again at once. One UPDATE over the (endpoint_id, state, created_at) index.
 */
export async function recoverFailed(
  services: DeliveriesServices,
  workspaceId: string,
  endpointId: string,
  since: string,
  actor = 'cli',
): Promise<{ recovered: number; since: string }> {
  const sinceMs = Date.parse(since);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(since) || Number.isNaN(sinceMs)) {
    throw new AppError('invalid_parameter', `"since" must be a date and time such as 2026-11-21T08:00:00Z; got "${since}"`, {
      param: 'since',
    });
  }
  const now = services.clock();
  if (sinceMs > now) throw new AppError('invalid_parameter', `"since" is in the future (${since}); choose a past time`, { param: 'since' });
  const sinceIso = new Date(sinceMs).toISOString();
  const at = new Date(now).toISOString();
  return services.database.db.transaction().execute(async (trx) => {
    const endpoint = await endpointIn(trx, workspaceId, endpointId);
    refuseDisabled(endpoint, 'recover its failed deliveries');
    const result = await trx
      .updateTable('delivery_jobs')
      .set({ state: 'pending', next_attempt_at: at, lease_until: null, updated_at: at })
      .where('endpoint_id', '=', endpointId)
      .where('state', '=', 'exhausted')
      .where('created_at', '>=', sinceIso)
      .executeTakeFirst();
    const recovered = Number(result.numUpdatedRows);
    await recordAudit(trx, {
      workspaceId,
      at,
      actor,
      action: 'deliveries.recovered',
      target: endpointId,
      detail: { since: sinceIso, recovered },
    });
    return { recovered, since: sinceIso };
  });
}

export type StatsWindow = '24h' | '7d';
export const STATS_WINDOWS: Record<StatsWindow, { buckets: number; bucketMs: number; label: string }> = {
  '24h': { buckets: 24, bucketMs: 3_600_000, label: 'last 24 hours, hourly' },
  '7d': { buckets: 28, bucketMs: 6 * 3_600_000, label: 'last 7 days, every 6 hours' },
};

export interface StatsBucket {
  /** Start of the bucket (ISO 8601 UTC). */
  start: string;
  attempts: number;
  succeeded: number;
  failed: number;
  /** Share of attempts that succeeded, 0 to 1; null when there were none. */
  success_rate: number | null;
  /** Median latency (the lower middle value), ms; null when there were no attempts. */
  p50_latency_ms: number | null;
  avg_latency_ms: number | null;
}

interface StatsRow {
  bucket: string;
  attempts: number | string;
  succeeded: number | string;
  latency_sum: number | string | null;
  p50: number | string | null;
}

/** The bucket key the SQLite query cuts from a timestamp: 'YYYY-MM-DDTHH', or 'YYYY-MM-DDT' and 0/6/12/18. */
function bucketKey(window: StatsWindow, startIso: string): string {
  return window === '24h' ? startIso.slice(0, 13) : `${startIso.slice(0, 11)}${Math.floor(Number(startIso.slice(11, 13)) / 6) * 6}`;
}

/**
 * Attempts of the endpoint over the window, in buckets (hourly for 24 h, 6-hourly for 7 d),
 * with empty buckets filled in. Read from the hourly rollup of migration 0013 (one row per
 * hour and distinct latency), not from the attempts: the cost is bounded by the window's hours
 * and the endpoint's latency spread, not by its traffic. The median is exact: the smallest
 * latency whose cumulative count reaches the lower middle, (n + 1) / 2 rounded down (written
 * `2 * below >= n`, which is the same for whole numbers and needs no integer division, which
 * PostgreSQL's numeric sums would not do).
 */
export async function deliveryStats(
  services: DeliveriesServices,
  workspaceId: string,
  endpointId: string,
  window: StatsWindow,
  now: number = services.clock(),
): Promise<{ window: StatsWindow; buckets: StatsBucket[] }> {
  const spec = STATS_WINDOWS[window];
  if (!spec) throw new AppError('invalid_parameter', `window must be 24h or 7d; got "${String(window)}"`, { param: 'window' });
  const db = services.database.db;
  await endpointIn(db, workspaceId, endpointId);
  const firstStart = Math.floor(now / spec.bucketMs) * spec.bucketMs - (spec.buckets - 1) * spec.bucketMs;
  const fromHour = new Date(firstStart).toISOString().slice(0, 13);
  // The bucket key from a stored hour 'YYYY-MM-DDTHH': itself, or 'YYYY-MM-DDT' and the hour
  // rounded down to 0/6/12/18 (the same text in both dialects; see bucketKey).
  const bucketExpr =
    window === '24h' ? sql<string>`hour` : sql<string>`substr(hour, 1, 11) || CAST(CAST(substr(hour, 12, 2) AS INTEGER) / 6 * 6 AS TEXT)`;
  const rows = (
    await sql<StatsRow>`
    WITH h AS (
      SELECT ${bucketExpr} AS bucket, latency_ms, sum(attempts) AS n, sum(succeeded) AS s
      FROM delivery_attempt_hours WHERE endpoint_id = ${endpointId} AND hour >= ${fromHour}
      GROUP BY 1, 2),
    c AS (
      SELECT bucket, latency_ms, n, s,
        sum(n) OVER (PARTITION BY bucket ORDER BY latency_ms ROWS UNBOUNDED PRECEDING) AS below,
        sum(n) OVER (PARTITION BY bucket) AS total
      FROM h)
    SELECT bucket, max(total) AS attempts, sum(s) AS succeeded, sum(latency_ms * n) AS latency_sum,
      min(CASE WHEN 2 * below >= total THEN latency_ms END) AS p50
    FROM c GROUP BY bucket`.execute(db)
  ).rows;
  const byKey = new Map(rows.map((r) => [r.bucket, r]));
  const buckets: StatsBucket[] = [];
  for (let i = 0; i < spec.buckets; i++) {
    const start = new Date(firstStart + i * spec.bucketMs).toISOString();
    const r = byKey.get(bucketKey(window, start));
    const attempts = r ? Number(r.attempts) : 0;
    const succeeded = r ? Number(r.succeeded) : 0;
    buckets.push({
      start,
      attempts,
      succeeded,
      failed: attempts - succeeded,
      success_rate: attempts ? succeeded / attempts : null,
      p50_latency_ms: r && r.p50 !== null ? Number(r.p50) : null,
      avg_latency_ms: r && attempts ? Math.round(Number(r.latency_sum) / attempts) : null,
    });
  }
  return { window, buckets };
}

/**
 * Sends a signed `endpoint.test` event to this one endpoint through the outbox. An endpoint
 * awaiting verification receives it once verified. A disabled one is refused.
 */
export async function sendTestEvent(
  services: DeliveriesServices,
  workspaceId: string,
  endpointId: string,
  actor = 'cli',
): Promise<{ event_id: string; event_type: typeof TEST_EVENT; endpoint_id: string; endpoint_status: WebhookEndpointsTable['status'] }> {
  const now = services.clock();
  const at = new Date(now).toISOString();
  return services.database.db.transaction().execute(async (trx) => {
    const endpoint = await endpointIn(trx, workspaceId, endpointId);
    refuseDisabled(endpoint, 'send a test event');
    const event = await emitTestEvent(trx, workspaceId, endpointId, now);
    await recordAudit(trx, { workspaceId, at, actor, action: 'endpoint.test_sent', target: endpointId, detail: { event_id: event.id } });
    return { event_id: event.id, event_type: TEST_EVENT, endpoint_id: endpointId, endpoint_status: endpoint.status };
  });
}
