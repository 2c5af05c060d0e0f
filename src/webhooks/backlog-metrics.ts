/**
 * The backlog series of /metrics (issue 26), read from the database at scrape time, so every
 * process that serves /metrics reports the whole queue, whichever worker delivers. Labels are
 * bounded: the TOP workspaces and endpoints by name, the rest under `other`.
 */
import { Gauge, type Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { Database } from '../store/database.js';
import { backlogByWorkspace, oldestDue, outcomesByEndpoint } from './backlog.js';

/** Workspaces and endpoints named in labels at most; the rest are summed under `other`. */
export const BACKLOG_LABELS_TOP = 20;

export function registerBacklogMetrics(registry: Registry, database: Database, clock: Clock): void {
  const registers = [registry];
  new Gauge({
    name: 'wsops_delivery_oldest_due_age_seconds',
    help: 'How long the oldest due delivery (pending, its time come, not claimed by a worker) has waited; 0 when none is due.',
    registers,
    async collect() {
      this.set((await oldestDue(database, clock())).age_seconds);
    },
  });
  // Each pair of series comes from one query, run by the collect() of the series registered
  // first (prom-client collects and prints one metric at a time, in registration order).
  const byWorkspace = { registers, labelNames: ['workspace'] as const };
  new Gauge({
    name: 'wsops_delivery_workspace_oldest_due_age_seconds',
    help: `How long the oldest due delivery has waited, per workspace: the ${BACKLOG_LABELS_TOP} workspaces waiting longest, the rest as workspace="other".`,
    ...byWorkspace,
    async collect() {
      const rows = await backlogByWorkspace(database, clock(), BACKLOG_LABELS_TOP);
      // Series of workspaces no longer due are dropped, not left at their last value.
      this.reset();
      due.reset();
      for (const r of rows) {
        this.set({ workspace: r.workspace }, r.oldest_due_age_seconds);
        due.set({ workspace: r.workspace }, r.due);
      }
    },
  });
  const due = new Gauge({
    name: 'wsops_delivery_workspace_due',
    help: 'Due deliveries per workspace (same workspaces as wsops_delivery_workspace_oldest_due_age_seconds, the rest summed as "other").',
    ...byWorkspace,
  });
  const byEndpoint = { registers, labelNames: ['endpoint'] as const };
  new Gauge({
    name: 'wsops_endpoint_attempts',
    help: `Delivery attempts over the current and previous hour, per endpoint: the ${BACKLOG_LABELS_TOP} busiest, the rest summed as endpoint="other".`,
    ...byEndpoint,
    async collect() {
      const rows = await outcomesByEndpoint(database, clock(), BACKLOG_LABELS_TOP);
      this.reset();
      succeeded.reset();
      latency.reset();
      for (const r of rows) {
        this.set({ endpoint: r.endpoint }, r.attempts);
        succeeded.set({ endpoint: r.endpoint }, r.attempts ? r.succeeded / r.attempts : 1);
        latency.set({ endpoint: r.endpoint }, r.mean_latency_seconds);
      }
    },
  });
  const succeeded = new Gauge({
    name: 'wsops_endpoint_success_ratio',
    help: 'Share of attempts that succeeded over the current and previous hour, per endpoint (same endpoints as wsops_endpoint_attempts).',
    ...byEndpoint,
  });
  const latency = new Gauge({
    name: 'wsops_endpoint_mean_latency_seconds',
    help: 'Mean attempt latency over the current and previous hour, per endpoint (same endpoints as wsops_endpoint_attempts).',
    ...byEndpoint,
  });
}
