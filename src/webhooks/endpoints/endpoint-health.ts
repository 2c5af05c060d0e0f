/**
 * An endpoint's health, from the outcomes of its attempts (after outpost's alert monitor): the
 * count of failures in a row (any 2xx resets it), verification (a 2xx to
 * `endpoint.verification` makes an unverified endpoint active and releases what it owed),
 * and auto-disable after 20 failures in a row (what it still owes is held). The dispatcher
 * only reports outcomes here.
 */
import type { Kysely } from '#kysely';
import { recordAudit } from '../../audit/audit.js';
import type { Logger } from '../../logger.js';
import type { DB } from '../../store/schema.js';
import { TEST_EVENT, VERIFICATION_EVENT } from '../events/event-types.js';
import { holdOwedJobs, releaseOwedJobs } from '../queue/queue.js';
import { FAILURES_BEFORE_DISABLE } from '../queue/schedule.js';

/** One recorded attempt, as the health rules see it. */
export interface AttemptReport {
  endpointId: string;
  eventType: string;
  ok: boolean;
  errorClass: string | null;
  /** Human summary of a failure, kept on the endpoint as its last failure. */
  error: string | null;
  /** When the attempt ended (epoch ms): outcomes apply in this order. */
  finishedAt: number;
}

/**
 * Whether an attempt says anything about the endpoint. A test event (sent on demand from the
 * console) neither counts toward auto-disable nor resets the count; a fault of wsops itself
 * (`internal_error`) is not the receiver's failure.
 */
export function countsTowardHealth(report: Pick<AttemptReport, 'eventType' | 'errorClass'>): boolean {
  return report.eventType !== TEST_EVENT && report.errorClass !== 'internal_error';
}

export interface HealthChanges {
  /** Endpoints disabled after too many failures in a row, with the deliveries now held. */
  disabled: { endpointId: string; workspaceId: string; failures: number; held: number; lastFailure: string | null }[];
  /** Endpoints that answered their verification and are now active, with the deliveries released. */
  verified: { endpointId: string; workspaceId: string; released: number }[];
}

interface Tally {
  reset: boolean;
  failures: number;
  verified: boolean;
  lastFailure: string | null;
  /** When the first failure after the batch's last success ended (epoch ms): a run of failures began. */
  firstFailureAt: number | null;
}

/** Folds one batch's attempts into per-endpoint tallies, in the order the attempts ended. */
export function tallyOutcomes(reports: readonly AttemptReport[]): Map<string, Tally> {
  const tallies = new Map<string, Tally>();
  for (const r of [...reports].sort((a, b) => a.finishedAt - b.finishedAt)) {
    if (!countsTowardHealth(r)) continue;
    const t = tallies.get(r.endpointId) ?? { reset: false, failures: 0, verified: false, lastFailure: null, firstFailureAt: null };
    if (r.ok) {
      t.reset = true;
      t.failures = 0;
      t.firstFailureAt = null;
      if (r.eventType === VERIFICATION_EVENT) t.verified = true;
    } else {
      t.failures++;
      t.lastFailure = r.error;
      t.firstFailureAt ??= r.finishedAt;
    }
    tallies.set(r.endpointId, t);
  }
  return tallies;
}

/**
 * Applies a batch's outcomes to the endpoints, inside the caller's transaction (the one that
 * records the attempts). Returns what changed, to be logged once the transaction commits.
 */
export async function applyAttemptOutcomes(trx: Kysely<DB>, reports: readonly AttemptReport[], now: number): Promise<HealthChanges> {
  const nowIso = new Date(now).toISOString();
  const changes: HealthChanges = { disabled: [], verified: [] };
  // Endpoints in id order: concurrent batches lock their rows in the same order (no deadlock).
  const tallies = [...tallyOutcomes(reports)].sort(([a], [b]) => (a < b ? -1 : 1));
  for (const [endpointId, t] of tallies) {
    const firstFailure = t.firstFailureAt === null ? null : new Date(t.firstFailureAt).toISOString();
    let count = trx
      .updateTable('webhook_endpoints')
      .set((eb) => ({
        consecutive_failures: t.reset ? t.failures : eb('consecutive_failures', '+', t.failures),
        ...(t.lastFailure ? { last_failure: t.lastFailure } : {}),
        // The run of failures that failure alerts measure: kept while it lasts, ended by a success.
        failing_since: t.reset ? firstFailure : eb.fn.coalesce('failing_since', eb.val(firstFailure)),
      }))
      .where('id', '=', endpointId);
    // Successes only: nothing to write unless a failure count is to be reset (a busy endpoint's
    // row is otherwise rewritten by every round of its deliveries; ADR 33).
    if (t.reset && t.failures === 0) count = count.where('consecutive_failures', '!=', 0);
    await count.execute();
    if (t.verified) {
      const verified = await trx
        .updateTable('webhook_endpoints')
        .set({ status: 'active', verified_at: nowIso, updated_at: nowIso })
        .where('id', '=', endpointId)
        .where('status', '=', 'unverified')
        .returning('workspace_id')
        .executeTakeFirst();
      const released = await releaseOwedJobs(trx, endpointId, nowIso);
      if (verified) changes.verified.push({ endpointId, workspaceId: verified.workspace_id, released });
    }
    if (t.failures > 0) {
      const disabled = await trx
        .updateTable('webhook_endpoints')
        .set({ status: 'disabled', disabled_reason: 'failures', disabled_at: nowIso, updated_at: nowIso })
        .where('id', '=', endpointId)
        .where('status', '=', 'active')
        .where('consecutive_failures', '>=', FAILURES_BEFORE_DISABLE)
        .returning(['workspace_id', 'consecutive_failures', 'last_failure'])
        .executeTakeFirst();
      if (disabled) {
        const held = await holdOwedJobs(trx, endpointId, nowIso);
        await recordAudit(trx, {
          workspaceId: disabled.workspace_id,
          at: nowIso,
          actor: 'system',
          action: 'endpoint.disabled',
          target: endpointId,
          detail: { reason: 'failures', consecutive_failures: disabled.consecutive_failures, held },
        });
        changes.disabled.push({
          endpointId,
          workspaceId: disabled.workspace_id,
          failures: disabled.consecutive_failures,
          held,
          lastFailure: disabled.last_failure,
        });
      }
    }
  }
  return changes;
}

/** One line per auto-disable (warn) and per held or released batch of deliveries (info). */
export function logHealthChanges(logger: Logger, changes: HealthChanges): void {
  for (const d of changes.disabled) {
    logger.warn(
      { endpoint_id: d.endpointId, workspace_id: d.workspaceId, consecutive_failures: d.failures, last_failure: d.lastFailure },
      'endpoint disabled after failures in a row',
    );
    if (d.held > 0)
      logger.info({ endpoint_id: d.endpointId, workspace_id: d.workspaceId, held: d.held }, 'deliveries held for a disabled endpoint');
  }
  for (const v of changes.verified) {
    logger.info({ endpoint_id: v.endpointId, workspace_id: v.workspaceId }, 'endpoint verified and active');
    if (v.released > 0)
      logger.info({ endpoint_id: v.endpointId, workspace_id: v.workspaceId, released: v.released }, 'held deliveries released');
  }
}
