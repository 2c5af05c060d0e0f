/**
 * The delivery backlog you can see (ADR 33): what is due and how long the oldest due delivery
 * has waited, per endpoint (the console) and overall and per workspace (/metrics), and each
 * endpoint's recent success rate and latency (/metrics). "Due" is a pending job whose
 * `next_attempt_at` has come: a job in flight carries its lease end there (queue.ts), a job
 * waiting for a retry its retry time, so neither counts as due. Each read is bounded by an
 * index: the (state, next_attempt_at) due index for the queue as a whole, the (endpoint_id,
 * state, created_at) index for one endpoint, the hourly rollup for the outcomes.
 */
import { sql } from '#kysely';
import type { Database } from '../../store/database.js';

export interface EndpointBacklog {
  /** Pending deliveries whose time has come, not yet claimed by a worker. */
  due: number;
  /** When the oldest of them became due (ISO 8601), or null when none is due. */
  oldest_due_at: string | null;
  /** Seconds the oldest due delivery has waited (0 when none). */
  oldest_due_age_seconds: number;
  /** Claimed by a worker, attempt under way. */
  in_flight: number;
  /** Waiting for a later attempt (after a failure). */
  retrying: number;
}

/** Label of the series that sums every workspace or endpoint beyond the top N. */
export const OTHER_LABEL = 'other';

/** One query over the endpoint's range of pending jobs. */
export async function endpointBacklog(database: Database, endpointId: string, now: number): Promise<EndpointBacklog> {
  const nowIso = new Date(now).toISOString();
  const [row] = await database.engine.readCommitted(
    sql<{
      due: number | null;
      oldest: string | null;
      in_flight: number | null;
      pending: number | null;
    }>`SELECT sum(CASE WHEN next_attempt_at <= ${nowIso} THEN 1 ELSE 0 END) AS due,
      min(CASE WHEN next_attempt_at <= ${nowIso} THEN next_attempt_at END) AS oldest,
      sum(CASE WHEN next_attempt_at > ${nowIso} AND locked_by IS NOT NULL AND lease_until > ${nowIso} THEN 1 ELSE 0 END) AS in_flight,
      count(*) AS pending
    FROM delivery_jobs WHERE endpoint_id = ${endpointId} AND state = 'pending'`,
  );
  const due = Number(row?.due ?? 0);
  const inFlight = Number(row?.in_flight ?? 0);
  const oldest = row?.oldest ?? null;
  return {
    due,
    oldest_due_at: oldest,
    oldest_due_age_seconds: ageSeconds(oldest, now),
    in_flight: inFlight,
    retrying: Number(row?.pending ?? 0) - due - inFlight,
  };
}

/** The oldest due delivery of the whole queue: one probe of the due index. */
export async function oldestDue(database: Database, now: number): Promise<{ oldest_due_at: string | null; age_seconds: number }> {
  const [row] = await database.engine.readCommitted(
    sql<{
      oldest: string | null;
    }>`SELECT min(next_attempt_at) AS oldest FROM delivery_jobs WHERE state = 'pending' AND next_attempt_at <= ${new Date(now).toISOString()}`,
  );
  const oldest = row?.oldest ?? null;
  return { oldest_due_at: oldest, age_seconds: ageSeconds(oldest, now) };
}

export interface WorkspaceBacklog {
  /** A workspace id, or OTHER_LABEL for every workspace beyond the top N together. */
  workspace: string;
  due: number;
  oldest_due_age_seconds: number;
}

/**
 * Due deliveries per workspace, the `top` workspaces whose oldest due delivery has waited
 * longest, and the rest summed under OTHER_LABEL (their oldest age, their total count): the
 * label set stays bounded however many tenants there are. Reads the due range of the index.
 */
export async function backlogByWorkspace(database: Database, now: number, top: number): Promise<WorkspaceBacklog[]> {
  const rows = await database.engine.readCommitted(
    sql<{
      workspace_id: string;
      due: number;
      oldest: string;
    }>`SELECT workspace_id, count(*) AS due, min(next_attempt_at) AS oldest FROM delivery_jobs
    WHERE state = 'pending' AND next_attempt_at <= ${new Date(now).toISOString()} GROUP BY workspace_id`,
  );
  const all = rows
    .map((r) => ({ workspace: r.workspace_id, due: Number(r.due), oldest_due_age_seconds: ageSeconds(r.oldest, now) }))
    .sort((a, b) => b.oldest_due_age_seconds - a.oldest_due_age_seconds || b.due - a.due);
  const head = all.slice(0, top);
  const rest = all.slice(top);
  if (rest.length)
    head.push({
      workspace: OTHER_LABEL,
      due: rest.reduce((n, r) => n + r.due, 0),
      oldest_due_age_seconds: Math.max(...rest.map((r) => r.oldest_due_age_seconds)),
    });
  return head;
}

export interface EndpointOutcomes {
  /** An endpoint id, or OTHER_LABEL for every endpoint beyond the top N together. */
  endpoint: string;
  attempts: number;
  succeeded: number;
  /** Mean attempt latency, seconds. */
  mean_latency_seconds: number;
}

/**
 * Attempts, successes and mean latency per endpoint over the current and the previous hour (the
 * hourly rollup of migration 0013): the `top` endpoints by attempts, the rest summed under
 * OTHER_LABEL.
 */
export async function outcomesByEndpoint(database: Database, now: number, top: number): Promise<EndpointOutcomes[]> {
  const fromHour = new Date(now - 3_600_000).toISOString().slice(0, 13);
  const rows = await database.engine.readCommitted(
    sql<{
      endpoint_id: string;
      attempts: number;
      succeeded: number;
      latency_sum: number;
    }>`SELECT endpoint_id, sum(attempts) AS attempts, sum(succeeded) AS succeeded, sum(latency_ms * attempts) AS latency_sum
    FROM delivery_attempt_hours WHERE hour >= ${fromHour} GROUP BY endpoint_id`,
  );
  const all = rows
    .map((r) => ({ endpoint: r.endpoint_id, attempts: Number(r.attempts), succeeded: Number(r.succeeded), latency: Number(r.latency_sum) }))
    .sort((a, b) => b.attempts - a.attempts || (a.endpoint < b.endpoint ? -1 : 1));
  const head = all.slice(0, top);
  const rest = all.slice(top);
  if (rest.length)
    head.push({
      endpoint: OTHER_LABEL,
      attempts: rest.reduce((n, r) => n + r.attempts, 0),
      succeeded: rest.reduce((n, r) => n + r.succeeded, 0),
      latency: rest.reduce((n, r) => n + r.latency, 0),
    });
  return head.map((r) => ({
    endpoint: r.endpoint,
    attempts: r.attempts,
    succeeded: r.succeeded,
    mean_latency_seconds: r.attempts ? r.latency / r.attempts / 1000 : 0,
  }));
}

function ageSeconds(iso: string | null, now: number): number {
  return iso ? Math.max(0, (now - Date.parse(iso)) / 1000) : 0;
}
