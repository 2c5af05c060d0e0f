/**
 * The delivery worker. A table is the queue: due jobs are claimed with a lease in one statement
 * (`FOR UPDATE SKIP LOCKED` on PostgreSQL, so several workers never take the same job; SQLite
 * serializes writers), posted concurrently, and their outcomes recorded in one transaction per
 * batch. A worker killed mid-attempt loses nothing: its lease expires and another worker
 * retries the job (at-least-once).
 */
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { newId } from '../ids.js';
import type { Services } from '../services.js';
import { insertBatches } from '../store/insert-batches.js';
import type { DB, DeliveryAttemptsTable } from '../store/schema.js';
import { type DeliveryObserver, NO_OBSERVER } from './delivery-observer.js';
import { signingSecrets } from './endpoints.js';
import { VERIFICATION_EVENT } from './event-types.js';
import { holdOwedJobs, releaseOwedJobs } from './owed-jobs.js';
import { FAILURES_BEFORE_DISABLE, MAX_ATTEMPTS, nextAttemptAt } from './schedule.js';
import { AgentPool, type AttemptOutcome, sendAttempt } from './send.js';
import { signatureHeader } from './signature.js';
import { type CheckedUrl, checkWebhookUrl } from './url-safety.js';

export interface DispatcherOptions {
  /** Jobs claimed per round. */
  batchSize?: number;
  /** Poll interval right after work; it doubles while idle, up to maxIdleMs. */
  pollMs?: number;
  /** Longest idle poll interval (default: 1 s on PostgreSQL, which also wakes workers by NOTIFY; 50 ms on SQLite). */
  maxIdleMs?: number;
  /** How long a claimed job is reserved; must exceed the 10 s attempt timeout. */
  leaseMs?: number;
  /**
   * Claim loops run side by side, so one batch's bookkeeping overlaps another's HTTP (claims
   * never overlap: each takes different jobs).
   */
  loops?: number;
  random?: () => number;
  /** Told of every recorded attempt (metrics). */
  observer?: DeliveryObserver;
}

interface ClaimedJob {
  id: string;
  workspace_id: string;
  event_id: string;
  endpoint_id: string;
  attempts: number;
  event_type: string;
  event_body: string;
  url: string;
  endpoint_status: string;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: string | null;
  event_created_at: string;
}

interface Result {
  job: ClaimedJob;
  deliveryId: string;
  attemptedAt: number;
  outcome: AttemptOutcome;
}

/** What an attempt needs of a claimed job, read in the same shape by both dialects' claims. */
const CLAIMED_COLUMNS = sql`SELECT c.id, c.workspace_id, c.event_id, c.endpoint_id, c.attempts, ev.type AS event_type, ev.body AS event_body,
  e.url, e.status AS endpoint_status, e.secret_ciphertext, e.previous_secret_ciphertext, e.previous_secret_expires_at, ev.created_at AS event_created_at`;
const CLAIMED_JOINS = sql`JOIN events ev ON ev.id = c.event_id JOIN webhook_endpoints e ON e.id = c.endpoint_id`;

export class Dispatcher {
  private readonly agents = new AgentPool();
  private running = false;
  private loops: Promise<void>[] = [];
  private readonly sleepers = new Set<() => void>();
  readonly workerId = newId('wrk');
  private readonly batchSize: number;
  private readonly pollMs: number;
  private readonly maxIdleMs: number;
  private listener: pg.Client | undefined;
  private readonly leaseMs: number;
  private readonly random: () => number;
  private readonly loopCount: number;
  private readonly observer: DeliveryObserver;

  constructor(
    private readonly services: Services,
    options: DispatcherOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 500;
    this.pollMs = options.pollMs ?? 10;
    this.maxIdleMs = options.maxIdleMs ?? (services.database.dialect === 'postgres' ? 1000 : 50);
    this.leaseMs = options.leaseMs ?? services.config.deliveryLeaseSeconds * 1000;
    this.random = options.random ?? Math.random;
    this.loopCount = options.loops ?? 2;
    this.observer = options.observer ?? NO_OBSERVER;
  }

  private get db(): Kysely<DB> {
    return this.services.database.db;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    if (this.services.database.dialect === 'postgres') void this.listen();
    this.loops = Array.from({ length: this.loopCount }, () => this.runLoop());
  }

  /** LISTEN for committed jobs (PostgreSQL); reconnects while running. */
  private async listen(): Promise<void> {
    while (this.running) {
      const client = new pg.Client({ connectionString: this.services.config.databaseUrl });
      const lost = new Promise<void>((resolve) => {
        client.on('error', () => resolve());
        client.on('end', () => resolve());
      });
      client.on('notification', () => this.wake());
      try {
        await client.connect();
        await client.query('LISTEN wsops_jobs');
        this.listener = client;
        this.wake(); // anything committed while not listening
        await lost;
      } catch {
        /* retried below */
      }
      this.listener = undefined;
      await client.end().catch(() => {});
      if (this.running) await this.pause(1000);
    }
  }

  private async runLoop(): Promise<void> {
    let idleMs = this.pollMs;
    while (this.running) {
      let handled = 0;
      try {
        handled = await this.runOnce();
      } catch (err) {
        // A fault of the delivery system, not of an endpoint: nothing is recorded against
        // anyone; leases expire and the jobs are retried.
        process.stderr.write(`wsops worker: ${err instanceof Error ? err.message : String(err)}\n`);
        await this.pause(1000);
      }
      if (handled === 0) {
        await this.pause(idleMs);
        idleMs = Math.min(this.maxIdleMs, idleMs * 2);
      } else {
        idleMs = this.pollMs;
      }
    }
  }

  /** Wakes an idle worker at once (the outbox calls it after committing an event in this process). */
  wake(): void {
    for (const wakeUp of [...this.sleepers]) wakeUp();
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (!this.running) return resolve();
      const done = () => {
        clearTimeout(timer);
        this.sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.sleepers.add(done);
    });
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.listener?.end().catch(() => {});
    await Promise.all(this.loops);
    await this.agents.close();
  }

  /** Claims due jobs, attempts them, records the outcomes. Returns how many were attempted. */
  async runOnce(): Promise<number> {
    const jobs = await this.claim();
    if (jobs.length === 0) return 0;
    const checks = await this.checkUrls(jobs);
    // Secrets are decrypted once per endpoint and batch, not once per attempt.
    const secrets = new Map<string, string[]>();
    const now = this.services.clock();
    for (const job of jobs) if (!secrets.has(job.endpoint_id)) secrets.set(job.endpoint_id, signingSecrets(this.services, job, now));
    const results = await Promise.all(
      jobs.map((job) => this.attempt(job, checks.get(job.endpoint_id), secrets.get(job.endpoint_id) ?? [])),
    );
    await this.record(results);
    return jobs.length;
  }

  private async claim(): Promise<ClaimedJob[]> {
    const now = this.services.clock();
    const nowIso = new Date(now).toISOString();
    const leaseIso = new Date(now + this.leaseMs).toISOString();
    // The queue alone, walked in run-time order; endpoint states come from two small subqueries
    // evaluated once, so no join can make the planner read every pending job before the LIMIT.
    const due = sql`
      SELECT j.id FROM delivery_jobs j
      WHERE j.state = 'pending' AND j.next_attempt_at <= ${nowIso}
        AND (j.lease_until IS NULL OR j.lease_until < ${nowIso})
        AND (j.endpoint_id IN (SELECT id FROM webhook_endpoints WHERE status = 'active')
          OR (j.event_type = ${VERIFICATION_EVENT} AND j.endpoint_id IN (SELECT id FROM webhook_endpoints WHERE status = 'unverified')))
      ORDER BY j.next_attempt_at
      LIMIT ${this.batchSize}`;
    if (this.services.database.dialect === 'postgres') {
      // One round trip: claim and read. `= ANY(ARRAY(...))` keeps the update on the primary key;
      // a plain `IN (...)` lets the planner hash-join against a scan of the whole jobs table.
      // The queue must be walked in index order whatever the statistics say: right after a
      // burst, stale statistics make the planner fetch every pending job and sort them (seen:
      // 125 ms per claim at 50,000 pending, against 10 ms in index order).
      const result = await this.db.transaction().execute(async (trx) => {
        await sql`SELECT set_config('enable_sort', 'off', true), set_config('enable_bitmapscan', 'off', true)`.execute(trx);
        return sql<ClaimedJob>`
        WITH claimed AS (
          UPDATE delivery_jobs SET lease_until = ${leaseIso}, updated_at = ${nowIso}
          WHERE id = ANY(ARRAY(${due} FOR UPDATE OF j SKIP LOCKED))
          RETURNING id, workspace_id, event_id, endpoint_id, attempts)
        ${CLAIMED_COLUMNS} FROM claimed c ${CLAIMED_JOINS}`.execute(trx);
      });
      return result.rows;
    }
    // SQLite: writers are serialized, so claiming and then reading cannot race another worker.
    const claimed = await sql<{ id: string }>`
      UPDATE delivery_jobs SET lease_until = ${leaseIso}, updated_at = ${nowIso} WHERE id IN (${due}) RETURNING id`.execute(this.db);
    const ids = claimed.rows.map((r) => r.id);
    const rows: ClaimedJob[] = [];
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = sql.join(ids.slice(i, i + 500));
      rows.push(
        ...(await sql<ClaimedJob>`${CLAIMED_COLUMNS} FROM delivery_jobs c ${CLAIMED_JOINS} WHERE c.id IN (${chunk})`.execute(this.db)).rows,
      );
    }
    return rows;
  }

  /** The URL rules hold at every delivery: each endpoint's URL is checked once per batch. */
  private async checkUrls(jobs: readonly ClaimedJob[]): Promise<Map<string, CheckedUrl | Error>> {
    const byEndpoint = new Map(jobs.map((j) => [j.endpoint_id, j.url]));
    const checks = new Map<string, CheckedUrl | Error>();
    await Promise.all(
      [...byEndpoint].map(async ([endpointId, url]) => {
        try {
          checks.set(endpointId, await checkWebhookUrl(url, { allowPrivate: this.services.config.allowPrivateWebhooks }));
        } catch (err) {
          checks.set(endpointId, err instanceof Error ? err : new Error(String(err)));
        }
      }),
    );
    return checks;
  }

  private async attempt(job: ClaimedJob, check: CheckedUrl | Error | undefined, secrets: readonly string[]): Promise<Result> {
    const deliveryId = newId('dlv');
    const attemptedAt = this.services.clock();
    if (!check || check instanceof Error) {
      return {
        job,
        deliveryId,
        attemptedAt,
        outcome: {
          ok: false,
          statusCode: null,
          errorClass: 'url_refused',
          error: check?.message ?? 'URL not checked',
          body: null,
          latencyMs: 0,
        },
      };
    }
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'wsops-webhooks/1',
      'x-service-event': job.event_type,
      'x-service-delivery': deliveryId,
      'x-service-signature': signatureHeader(secrets, Math.floor(attemptedAt / 1000), job.event_body),
    };
    const outcome = await sendAttempt(this.agents.get(job.endpoint_id, check.addresses), check.url.toString(), headers, job.event_body);
    return { job, deliveryId, attemptedAt, outcome };
  }

  /** All bookkeeping of a batch in one transaction: attempts, jobs, endpoint counters. */
  private async record(results: readonly Result[]): Promise<void> {
    const random = this.random;
    const attempts: DeliveryAttemptsTable[] = [];
    const jobUpdates: { id: string; state: string; attempts: number; next: string | null }[] = [];
    for (const r of results) {
      const attemptNo = r.job.attempts + 1;
      // Delays run from the start of the previous attempt, so the schedule does not drift with latency.
      const next = r.outcome.ok ? undefined : nextAttemptAt(attemptNo, r.attemptedAt, random());
      const nextIso = next === undefined ? null : new Date(next).toISOString();
      this.observer.attempted(
        r.outcome.ok ? 'succeeded' : 'failed',
        r.outcome.errorClass,
        r.job.attempts === 0 ? r.attemptedAt - Date.parse(r.job.event_created_at) : null,
      );
      attempts.push({
        id: r.deliveryId,
        job_id: r.job.id,
        workspace_id: r.job.workspace_id,
        event_id: r.job.event_id,
        event_type: r.job.event_type,
        endpoint_id: r.job.endpoint_id,
        attempt: attemptNo,
        attempted_at: new Date(r.attemptedAt).toISOString(),
        status_code: r.outcome.statusCode,
        outcome: r.outcome.ok ? 'succeeded' : 'failed',
        error_class: r.outcome.errorClass,
        latency_ms: r.outcome.latencyMs,
        response_body: r.outcome.body,
        next_attempt_at: nextIso,
      });
      jobUpdates.push({
        id: r.job.id,
        state: r.outcome.ok ? 'succeeded' : attemptNo >= MAX_ATTEMPTS ? 'exhausted' : 'pending',
        attempts: attemptNo,
        next: nextIso,
      });
    }
    // Per endpoint: failures after its last success in this batch, whether it succeeded at all.
    const endpoints = new Map<string, { reset: boolean; failures: number; verified: boolean; lastFailure: string | null }>();
    const ordered = [...results].sort((a, b) => a.attemptedAt + a.outcome.latencyMs - (b.attemptedAt + b.outcome.latencyMs));
    for (const r of ordered) {
      const e = endpoints.get(r.job.endpoint_id) ?? { reset: false, failures: 0, verified: false, lastFailure: null };
      if (r.outcome.ok) {
        e.reset = true;
        e.failures = 0;
        if (r.job.event_type === VERIFICATION_EVENT) e.verified = true;
      } else {
        e.failures++;
        e.lastFailure = r.outcome.error;
      }
      endpoints.set(r.job.endpoint_id, e);
    }
    const nowIso = new Date(this.services.clock()).toISOString();
    await this.db.transaction().execute(async (trx) => {
      if (this.services.database.dialect === 'postgres') {
        // One statement per table whatever the batch size: arrays unnested server-side, instead
        // of thousands of bound parameters.
        const col = <K extends keyof DeliveryAttemptsTable>(k: K) => attempts.map((a) => a[k]);
        await sql`
          INSERT INTO delivery_attempts (id, job_id, workspace_id, event_id, event_type, endpoint_id, attempt, attempted_at,
            status_code, outcome, error_class, latency_ms, response_body, next_attempt_at)
          SELECT * FROM unnest(${col('id')}::text[], ${col('job_id')}::text[], ${col('workspace_id')}::text[], ${col('event_id')}::text[],
            ${col('event_type')}::text[], ${col('endpoint_id')}::text[], ${col('attempt')}::int[], ${col('attempted_at')}::text[],
            ${col('status_code')}::int[], ${col('outcome')}::text[], ${col('error_class')}::text[], ${col('latency_ms')}::int[],
            ${col('response_body')}::text[], ${col('next_attempt_at')}::text[])`.execute(trx);
        await sql`
          UPDATE delivery_jobs SET state = v.state, attempts = v.attempts, next_attempt_at = v.next_at, lease_until = NULL, updated_at = ${nowIso}
          FROM unnest(${jobUpdates.map((u) => u.id)}::text[], ${jobUpdates.map((u) => u.state)}::text[],
            ${jobUpdates.map((u) => u.attempts)}::int[], ${jobUpdates.map((u) => u.next)}::text[]) AS v(id, state, attempts, next_at)
          WHERE delivery_jobs.id = v.id`.execute(trx);
      } else {
        await insertBatches(trx, 'delivery_attempts', attempts);
        for (let i = 0; i < jobUpdates.length; i += 400) {
          const values = sql.join(jobUpdates.slice(i, i + 400).map((u) => sql`(${u.id}, ${u.state}, ${u.attempts}, ${u.next})`));
          await sql`
            WITH v(id, state, attempts, next_at) AS (VALUES ${values})
            UPDATE delivery_jobs SET state = v.state, attempts = CAST(v.attempts AS INTEGER), next_attempt_at = v.next_at,
              lease_until = NULL, updated_at = ${nowIso}
            FROM v WHERE delivery_jobs.id = v.id`.execute(trx);
        }
      }
      // Endpoints in id order: concurrent batches lock their rows in the same order (no deadlock).
      for (const [endpointId, e] of [...endpoints].sort(([a], [b]) => (a < b ? -1 : 1))) {
        await trx
          .updateTable('webhook_endpoints')
          .set((eb) => ({
            consecutive_failures: e.reset ? e.failures : eb('consecutive_failures', '+', e.failures),
            ...(e.lastFailure ? { last_failure: e.lastFailure } : {}),
          }))
          .where('id', '=', endpointId)
          .execute();
        if (e.verified) {
          await trx
            .updateTable('webhook_endpoints')
            .set({ status: 'active', verified_at: nowIso, updated_at: nowIso })
            .where('id', '=', endpointId)
            .where('status', '=', 'unverified')
            .execute();
          await releaseOwedJobs(trx, endpointId, nowIso);
        }
        if (e.failures > 0) {
          const disabled = await trx
            .updateTable('webhook_endpoints')
            .set({ status: 'disabled', disabled_reason: 'failures', disabled_at: nowIso, updated_at: nowIso })
            .where('id', '=', endpointId)
            .where('status', '=', 'active')
            .where('consecutive_failures', '>=', FAILURES_BEFORE_DISABLE)
            .executeTakeFirst();
          if (Number(disabled.numUpdatedRows) > 0) await holdOwedJobs(trx, endpointId, nowIso);
        }
      }
    });
  }
}
