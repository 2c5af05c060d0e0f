/**
 * The backlog series of /metrics (ADR 33), read from the database at scrape time, so every
 * process that serves /metrics reports the whole queue, whichever worker delivers. Labels are
 * bounded: the BACKLOG_LABELS_TOP workspaces and endpoints by id, the rest under `other`.
 */
import { Gauge, type Registry } from 'prom-client';
import type { Clock } from '../../clock.js';
import type { Database } from '../../store/database.js';
import { backlogByWorkspace, oldestDue, outcomesByEndpoint } from './backlog.js';

/** Workspaces and endpoints named in labels at most; the rest are summed under `other`. */
export const BACKLOG_LABELS_TOP = 20;

/**
 * One read shared by the series of a scrape: prom-client collects every metric at once, so
 * the series that come from one query ask for the same promise.
 */
function sharedRead<T>(read: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= read().finally(() => {
      pending = undefined;
    });
    return pending;
  };
}

/** The names of the backlog's gauges (metrics.ts counts them among the gauges read from the database). */
export const BACKLOG_METRICS = {
  oldestDue: 'wsops_delivery_oldest_due_age_seconds',
  workspaceOldestDue: 'wsops_delivery_workspace_oldest_due_age_seconds',
  workspaceDue: 'wsops_delivery_workspace_due',
  endpointAttempts: 'wsops_endpoint_attempts',
  endpointSuccessRatio: 'wsops_endpoint_success_ratio',
  endpointMeanLatency: 'wsops_endpoint_mean_latency_seconds',
} as const;

export function registerBacklogMetrics(registry: Registry, database: Database, clock: Clock): void {
  const registers = [registry];
  new Gauge({
    name: BACKLOG_METRICS.oldestDue,
    help: 'How long the oldest due delivery (pending, its time come, not claimed by a worker) has waited; 0 when none is due.',
    registers,
    async collect() {
      this.set((await oldestDue(database, clock())).age_seconds);
    },
  });

  const workspaces = sharedRead(() => backlogByWorkspace(database, clock(), BACKLOG_LABELS_TOP));
  const perWorkspace = (name: string, help: string, value: (r: Awaited<ReturnType<typeof workspaces>>[number]) => number) =>
    new Gauge({
      name,
      help,
      registers,
      labelNames: ['workspace'] as const,
      async collect() {
        const rows = await workspaces();
        // Series of workspaces no longer due are dropped, not left at their last value.
        this.reset();
        for (const r of rows) this.set({ workspace: r.workspace }, value(r));
      },
    });
  perWorkspace(
    BACKLOG_METRICS.workspaceOldestDue,
    `How long the oldest due delivery has waited, per workspace: the ${BACKLOG_LABELS_TOP} workspaces waiting longest, the rest as workspace="other".`,
    (r) => r.oldest_due_age_seconds,
  );
  perWorkspace(
    BACKLOG_METRICS.workspaceDue,
    `Due deliveries per workspace (the workspaces of ${BACKLOG_METRICS.workspaceOldestDue}, the rest summed as "other").`,
    (r) => r.due,
  );

  const endpoints = sharedRead(() => outcomesByEndpoint(database, clock(), BACKLOG_LABELS_TOP));
  const perEndpoint = (name: string, help: string, value: (r: Awaited<ReturnType<typeof endpoints>>[number]) => number) =>
    new Gauge({
      name,
      help,
      registers,
      labelNames: ['endpoint'] as const,
      async collect() {
        const rows = await endpoints();
        this.reset();
        for (const r of rows) this.set({ endpoint: r.endpoint }, value(r));
      },
    });
  perEndpoint(
    BACKLOG_METRICS.endpointAttempts,
    `Delivery attempts over the current and previous hour, per endpoint: the ${BACKLOG_LABELS_TOP} busiest, the rest summed as endpoint="other".`,
    (r) => r.attempts,
  );
  perEndpoint(
    BACKLOG_METRICS.endpointSuccessRatio,
    `Share of attempts that succeeded over the current and previous hour, per endpoint (the endpoints of ${BACKLOG_METRICS.endpointAttempts}).`,
    (r) => (r.attempts ? r.succeeded / r.attempts : 1),
  );
  perEndpoint(
    BACKLOG_METRICS.endpointMeanLatency,
    `Mean attempt latency over the current and previous hour, per endpoint (the endpoints of ${BACKLOG_METRICS.endpointAttempts}).`,
    (r) => r.mean_latency_seconds,
  );
}
