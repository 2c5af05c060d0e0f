/**
 * The delivery worker's loop: claim due jobs (queue.ts), attempt them concurrently (through the
 * transport of each endpoint's kind, destinations/),
 * record the outcomes and report them to the endpoint-health rules (endpoint-health.ts) in one
 * transaction per endpoint and claim. A worker killed mid-attempt loses nothing: its lease
 * expires and another worker retries the job (at-least-once).
 *
 * Fairness: the claim is round-robin across endpoints and caps each endpoint's jobs in flight
 * across all workers (queue.ts). Here, each endpoint's jobs of a claim run and are recorded
 * on their own, and the loop claims again as soon as this worker has room: a slow or hanging
 * receiver holds only its own slots (at most the per-endpoint cap, each at most the 10 s
 * attempt timeout), never the loop, so other endpoints' jobs are claimed and sent meanwhile.
 *
 * Faults are kept where they belong: a fault of one job or one endpoint (a secret that cannot
 * be decrypted, an exception while preparing the request) is a failed attempt of that job with
 * its error class, and the rest of the batch goes on; a fault of wsops itself (the database
 * unreachable) is logged and retried with backoff, and recorded against no endpoint.
 */
import { setMaxListeners } from 'node:events';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import type { SecretBox } from '../secret-box.js';
import type { Database } from '../store/database.js';
import { JOBS_CHANNEL } from '../store/dialects/postgres-jobs.js';
import { ListenSession } from '../store/listen-session.js';
import type { DeliveryAttemptsTable } from '../store/schema.js';
import { type DeliveryObserver, NO_OBSERVER } from './delivery-observer.js';
import { checkEndpointUrl } from './destinations/address.js';
import { kindOf, Transports } from './destinations/index.js';
import { ATTEMPT_TIMEOUT_MS, type AttemptOutcome, type ErrorClass } from './destinations/send.js';
import type { CheckedUrl } from './destinations/url-safety.js';
import { type AttemptReport, applyAttemptOutcomes, type HealthChanges, logHealthChanges } from './endpoints/endpoint-health.js';
import { signingSecrets } from './endpoints/endpoints.js';
import { type ClaimedJob, claimDueJobs, type JobCompletion, nextThrottleTurn, recordOutcomes } from './queue/queue.js';
import { MAX_ATTEMPTS, nextAttemptAt } from './queue/schedule.js';
import { signatureHeader } from './signing/signature.js';
import { standardHeaders } from './signing/standard-signature.js';

/** What this file takes of the services built at start (services.ts). */
export interface DispatcherServices {
  config: Config;
  database: Database;
  secretBox: SecretBox;
  clock: Clock;
  logger: Logger;
}

/**
 * Attempts all workers together have in flight to one endpoint at most. An endpoint's slots are
 * held from its claim until its outcomes are recorded, so this also bounds its throughput:
 * 16 gave one endpoint about 700 deliveries/s at most on 2 cores; 64 lets a claim carry what
 * arrived during the previous round trip (ADR 33).
 */
export const DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT = 64;
/**
 * Attempts one worker has in flight at most, all endpoints together: room for 31 endpoints
 * whose receivers hang (each holding its cap until the 10 s attempt timeout) before a worker's
 * budget is full.
 */
export const DEFAULT_MAX_IN_FLIGHT = 2000;
const BACKOFF_START_MS = 250;
const BACKOFF_MAX_MS = 5000;

export interface DispatcherOptions {
  /** Jobs claimed per round. */
  batchSize?: number;
  /** How long a round that took every due job gathers before the next claim; the first idle poll, doubling up to maxIdleMs. */
  pollMs?: number;
  /** Longest idle poll interval (default: 1 s on PostgreSQL, which also wakes workers by NOTIFY; 50 ms on SQLite). */
  maxIdleMs?: number;
  /** How long a claimed job is reserved; must exceed the 10 s attempt timeout. */
  leaseMs?: number;
  /** Attempts this worker has started and not yet recorded, all endpoints together, at most. */
  maxInFlight?: number;
  /** Requests all workers together have open to one endpoint at most; further jobs of it stay in the queue. */
  maxInFlightPerEndpoint?: number;
  /** An endpoint's HTTP agent (or broker connection) unused this long is closed. */
  agentIdleMs?: number;
  /** Told about every recorded attempt (metrics). */
  observer?: DeliveryObserver;
  random?: () => number;
}

interface Result {
  job: ClaimedJob;
  deliveryId: string;
  attemptedAt: number;
  outcome: AttemptOutcome;
}

const failure = (errorClass: ErrorClass, error: string): AttemptOutcome => ({
  ok: false,
  statusCode: null,
  errorClass,
  error,
  body: null,
  latencyMs: 0,
});

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** What an attempt decrypts once per endpoint and batch: the signing secrets, and a broker destination's password. */
interface EndpointSecrets {
  signing: string[];
  password: string | null;
}

export class Dispatcher {
  /** One transport per destination kind (destinations/): the only part of a delivery that differs by kind. */
  private readonly transports: Transports;
  private running = false;
  private loop: Promise<void> = Promise.resolve();
  private readonly sleepers = new Set<() => void>();
  /** Counts wake() calls: one that comes while the loop is claiming is not lost (runLoop). */
  private wakes = 0;
  readonly workerId = newId('wrk');
  private readonly batchSize: number;
  private readonly pollMs: number;
  private readonly maxIdleMs: number;
  private listener: ListenSession | undefined;
  private readonly leaseMs: number;
  private readonly random: () => number;
  private readonly maxInFlight: number;
  private readonly maxInFlightPerEndpoint: number;
  private readonly observer: DeliveryObserver;
  private readonly log: Logger;
  /** Jobs claimed and not yet recorded (or given up), all endpoints together. */
  private inFlight = 0;
  /** Each endpoint's share of a claim, running: stop() waits for them. */
  private readonly groups = new Set<Promise<void>>();
  /** Consecutive failed rounds (claim or bookkeeping): drives backoff and logging. */
  private failedRounds = 0;

  constructor(
    private readonly services: DispatcherServices,
    options: DispatcherOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 500;
    // 25 ms, not 10: events born from domain actions arrive one every few milliseconds, and a
    // round (a claim and a record) costs the same whatever it carries (ADR 35, amended for issue 39).
    this.pollMs = options.pollMs ?? 25;
    this.maxIdleMs = options.maxIdleMs ?? (services.database.engine.announcesJobs ? 1000 : 50);
    this.leaseMs = options.leaseMs ?? services.config.deliveryLeaseSeconds * 1000;
    this.random = options.random ?? Math.random;
    this.maxInFlight = options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
    this.maxInFlightPerEndpoint = options.maxInFlightPerEndpoint ?? DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT;
    this.observer = options.observer ?? NO_OBSERVER;
    this.transports = new Transports({ idleMs: options.agentIdleMs });
    this.log = services.logger.child({ component: 'dispatcher', worker_id: this.workerId });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    if (this.services.database.engine.announcesJobs) this.listener = this.listen();
    this.loop = this.runLoop();
  }

  /**
   * LISTEN for committed jobs (PostgreSQL): the notification wakes the loop, so an idle worker
   * can poll rarely and still start within milliseconds. A job committed while the session was
   * down is found by the next poll; a reconnected session wakes the loop at once for it.
   */
  private listen(): ListenSession {
    const session = new ListenSession(this.services.config.databaseUrl, JOBS_CHANNEL, `wsops-worker-${this.workerId}`, {
      notification: () => this.wake(),
      up: () => this.wake(),
      down: (err, retryMs) => {
        if (this.running)
          this.log.warn({ err: message(err), retry_in_ms: retryMs }, 'job notifications lost; reconnecting (polling meanwhile)');
      },
    });
    session.start();
    return session;
  }

  private async runLoop(): Promise<void> {
    let idleMs = this.pollMs;
    while (this.running) {
      if (this.inFlight >= this.maxInFlight) {
        await this.pause(this.maxIdleMs); // woken as soon as an endpoint's share is recorded
        continue;
      }
      let handled = 0;
      let drained = false;
      let throttleTurnMs: number | undefined;
      const wakes = this.wakes;
      try {
        const started = await this.claimAndStart();
        handled = started.count;
        drained = handled < started.limit;
        if (handled === 0) throttleTurnMs = await this.untilThrottleTurn();
        // Outcomes are recorded as each endpoint's share ends; a failure there was logged
        // (record() backs off and retries) and its jobs come back after their lease.
        started.done.catch(() => {});
        this.recovered();
      } catch (err) {
        // A fault of the delivery system, not of an endpoint: nothing is recorded against
        // anyone; the loop backs off and tries again, and leases of anything unrecorded expire.
        await this.pause(this.failed('delivery round failed', err));
        continue;
      }
      if (handled === 0 && this.wakes === wakes) {
        // A throttled endpoint's next turn ends the idle wait early (its jobs wait for it).
        await this.pause(Math.min(idleMs, throttleTurnMs ?? idleMs));
        idleMs = Math.min(this.maxIdleMs, idleMs * 2);
        continue;
      }
      idleMs = this.pollMs;
      if (drained && handled > 0 && this.running) {
        // The claim took every due job: what arrives next gathers for one poll interval, so a
        // busy endpoint's rounds carry many deliveries each, not one (ADR 33). Not cut short
        // by wake(): that is what would make the rounds small again.
        await new Promise((r) => setTimeout(r, this.pollMs));
        // While a share is still in flight, the next claim waits for it to be recorded (its wake)
        // or a notification: claiming at once mostly found the endpoint still at its cap, an
        // empty write transaction each round (ADR 35). With nothing in flight it claims at once,
        // and the idle wait starts short again: a longer one only delays the next event.
        if (this.inFlight > 0 && this.wakes === wakes) await this.pause(this.maxIdleMs);
      }
    }
  }

  /** Milliseconds until the next turn of a throttled endpoint, if one comes within the idle wait. */
  private async untilThrottleTurn(): Promise<number | undefined> {
    const now = this.services.clock();
    const turn = await nextThrottleTurn(this.services.database.deliveries, now);
    return turn === undefined ? undefined : Math.max(1, turn - now);
  }

  /** Logs a failed round (the first at warn, repeats at debug) and returns the backoff to wait. */
  private failed(what: string, err: unknown): number {
    this.failedRounds++;
    const backoff = Math.min(BACKOFF_MAX_MS, BACKOFF_START_MS * 2 ** Math.min(10, this.failedRounds - 1));
    const fields = { err: message(err), failed_rounds: this.failedRounds, retry_in_ms: backoff };
    if (this.failedRounds === 1) this.log.warn(fields, `${what}; retrying with backoff`);
    else this.log.debug(fields, `${what} again`);
    return backoff;
  }

  private recovered(): void {
    if (this.failedRounds === 0) return;
    this.log.info({ failed_rounds: this.failedRounds }, 'delivery recovered');
    this.failedRounds = 0;
  }

  /**
   * Wakes an idle worker at once: a job notification (PostgreSQL), a share of a claim recorded
   * (room for more in flight), stop(), and the renewal check after it emitted events (worker.ts).
   * Events the API, CLI or console commit are found by the next poll, or woken by their NOTIFY.
   */
  wake(): void {
    this.wakes++;
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

  /**
   * Graceful stop (SIGTERM): no further claim; the attempts in flight finish (each bounded by
   * the 10 s attempt timeout) and are recorded, which ends their leases. A claim starts every
   * job it took at once, so nothing claimed is left waiting under a lease for another worker.
   */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.listener?.close();
    await this.loop;
    await Promise.allSettled([...this.groups]);
    await this.transports.close();
  }

  /** Claims due jobs, attempts them, records the outcomes. Returns how many were attempted. */
  async runOnce(): Promise<number> {
    const { count, done } = await this.claimAndStart();
    await done;
    return count;
  }

  /**
   * Claims what this worker has room for and starts it: each endpoint's jobs are attempted and
   * recorded on their own (`done` settles when all are), so a slow endpoint delays no other.
   */
  private async claimAndStart(): Promise<{ count: number; limit: number; done: Promise<void> }> {
    const limit = Math.max(1, Math.min(this.batchSize, this.maxInFlight - this.inFlight));
    const claim = await claimDueJobs(this.services.database.deliveries, this.services.database.engine, {
      now: this.services.clock(),
      leaseMs: this.leaseMs,
      limit,
      perEndpoint: this.maxInFlightPerEndpoint,
    });
    const leaseEnds = performance.now() + this.leaseMs;
    const byEndpoint = new Map<string, ClaimedJob[]>();
    for (const job of claim.jobs) byEndpoint.set(job.endpoint_id, [...(byEndpoint.get(job.endpoint_id) ?? []), job]);
    const shares = [...byEndpoint.values()].map((jobs) => this.deliver(claim.token, jobs, leaseEnds));
    return { count: claim.jobs.length, limit, done: Promise.all(shares).then(() => {}) };
  }

  /** One endpoint's share of a claim: attempted, recorded, then its room is free for the next claim. */
  private deliver(token: string, jobs: ClaimedJob[], leaseEnds: number): Promise<void> {
    this.inFlight += jobs.length;
    const share: Promise<void> = this.attemptAll(jobs)
      .then((results) => this.record(token, results, leaseEnds))
      .finally(() => {
        this.inFlight -= jobs.length;
        this.groups.delete(share);
        this.wake();
      });
    this.groups.add(share);
    return share;
  }

  /** Attempts a batch of jobs concurrently. */
  private async attemptAll(jobs: readonly ClaimedJob[]): Promise<Result[]> {
    const checks = await this.checkUrls(jobs);
    const secrets = this.secrets(jobs);
    const resent = await this.resentJobs(jobs);
    // The attempts start together: one 10 s deadline (one timer) serves them all, each attempt
    // listening to it (so more listeners than Node's leak warning expects).
    const deadline = AbortSignal.timeout(ATTEMPT_TIMEOUT_MS);
    setMaxListeners(0, deadline);
    return Promise.all(
      jobs.map(async (job) => {
        try {
          return await this.attempt(job, checks.get(job.endpoint_id), secrets.get(job.endpoint_id), deadline, resent.has(job.id));
        } catch (err) {
          // An exception of this job alone: a failed attempt of this job, the batch goes on.
          this.log.error({ err: message(err), job_id: job.id, endpoint_id: job.endpoint_id }, 'delivery attempt failed inside wsops');
          return { job, deliveryId: newId('dlv'), attemptedAt: this.services.clock(), outcome: failure('internal_error', message(err)) };
        }
      }),
    );
  }

  /**
   * Jobs of broker destinations sent again after a success (a resend): a broker that deduplicates
   * by message id (NATS) would drop them. One query, only for jobs attempted before; webhook jobs
   * are never asked about.
   */
  private async resentJobs(jobs: readonly ClaimedJob[]): Promise<Set<string>> {
    const ids = jobs.filter((j) => j.attempts > 0 && kindOf(j.url) !== 'https').map((j) => j.id);
    if (ids.length === 0) return new Set();
    const rows = await this.services.database.deliveries
      .selectFrom('delivery_attempts')
      .select('job_id')
      .where('job_id', 'in', ids)
      .where('outcome', '=', 'succeeded')
      .execute();
    return new Set(rows.map((r) => r.job_id));
  }

  /** Secrets are decrypted once per endpoint and batch; one that cannot be is that endpoint's fault alone. */
  private secrets(jobs: readonly ClaimedJob[]): Map<string, EndpointSecrets | Error> {
    const secrets = new Map<string, EndpointSecrets | Error>();
    const now = this.services.clock();
    for (const job of jobs) {
      if (secrets.has(job.endpoint_id)) continue;
      try {
        const password =
          job.destination_secret_ciphertext === null ? null : this.services.secretBox.open(job.destination_secret_ciphertext);
        secrets.set(job.endpoint_id, { signing: signingSecrets(this.services, job, now), password });
      } catch (err) {
        // Never the ciphertext nor any secret in the log: the endpoint and what failed.
        this.log.error(
          { endpoint_id: job.endpoint_id, workspace_id: job.workspace_id, err: message(err) },
          'signing secret cannot be decrypted; deliveries to this endpoint fail until it is rotated',
        );
        secrets.set(job.endpoint_id, new Error(`signing secret cannot be decrypted (${message(err)}); rotate the secret`));
      }
    }
    return secrets;
  }

  /** The URL rules hold at every delivery: each endpoint's URL is checked once per batch. */
  private async checkUrls(jobs: readonly ClaimedJob[]): Promise<Map<string, CheckedUrl | Error>> {
    const byEndpoint = new Map(jobs.map((j) => [j.endpoint_id, j.url]));
    const checks = new Map<string, CheckedUrl | Error>();
    await Promise.all(
      [...byEndpoint].map(async ([endpointId, url]) => {
        try {
          checks.set(endpointId, await checkEndpointUrl(url, { allowPrivate: this.services.config.allowPrivateWebhooks }));
        } catch (err) {
          checks.set(endpointId, err instanceof Error ? err : new Error(String(err)));
        }
      }),
    );
    return checks;
  }

  private async attempt(
    job: ClaimedJob,
    check: CheckedUrl | Error | undefined,
    secrets: EndpointSecrets | Error | undefined,
    deadline: AbortSignal,
    resent: boolean,
  ): Promise<Result> {
    const deliveryId = newId('dlv');
    const attemptedAt = this.services.clock();
    if (!check || check instanceof Error) {
      const reason = check?.message ?? 'URL not checked';
      // The operator who reads the server log, not only the delivery history, learns which rule
      // refused and (in the reason) the setting that would allow it.
      this.log.warn(
        {
          delivery_id: deliveryId,
          event_id: job.event_id,
          event_type: job.event_type,
          endpoint_id: job.endpoint_id,
          workspace_id: job.workspace_id,
          rule: check instanceof AppError ? check.extra['rule'] : undefined,
          reason,
        },
        'delivery refused (url_refused): the endpoint URL breaks a webhook URL rule, so nothing was sent',
      );
      return { job, deliveryId, attemptedAt, outcome: failure('url_refused', reason) };
    }
    if (!secrets || secrets instanceof Error) {
      return { job, deliveryId, attemptedAt, outcome: failure('secret_unavailable', secrets?.message ?? 'no signing secret') };
    }
    const seconds = Math.floor(attemptedAt / 1000);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'x-service-event': job.event_type,
      'x-service-delivery': deliveryId,
      'x-service-signature': signatureHeader(secrets.signing, seconds, job.event_body),
      ...(Number(job.standard_webhooks) === 1 ? standardHeaders(secrets.signing, job.event_id, seconds, job.event_body) : {}),
    };
    const outcome = await this.transports.of(kindOf(job.url)).send(
      {
        endpointId: job.endpoint_id,
        workspaceId: job.workspace_id,
        url: check.url,
        addresses: check.addresses,
        password: secrets.password,
        exchange: job.exchange,
        routingKey: job.routing_key,
        subject: job.subject,
      },
      {
        eventId: job.event_id,
        eventType: job.event_type,
        deliveryId,
        headers,
        body: job.event_body,
        // A resend the user asked for must arrive again, so it is not the event id a broker deduplicates on (ADR 52).
        dedupeId: resent ? `${job.event_id}-${deliveryId}` : job.event_id,
      },
      deadline,
    );
    return { job, deliveryId, attemptedAt, outcome };
  }

  /**
   * Records a batch, retrying with backoff while the lease lasts (the attempts were made; sending
   * them again is the last resort). After two failures of the whole batch, each result is
   * recorded alone, so one row that cannot be written does not hold back the others.
   */
  private async record(token: string, results: readonly Result[], leaseEnds: number): Promise<void> {
    let left = [...results];
    for (let round = 0; ; round++) {
      try {
        if (round < 2) {
          await this.recordBatch(token, left);
          left = [];
        } else {
          const failed: Result[] = [];
          for (const r of left) await this.recordBatch(token, [r]).catch(() => failed.push(r));
          if (failed.length === left.length) throw new Error(`none of ${left.length} outcomes could be recorded`);
          left = failed;
        }
      } catch (err) {
        const backoff = this.failed('recording delivery outcomes failed', err);
        // Out of the loop (a direct runOnce), at stop, or once the lease is over, give up: the
        // jobs are claimed again after their lease and attempted again (at-least-once).
        if (!this.running || performance.now() + backoff >= leaseEnds) throw err;
        await new Promise((r) => setTimeout(r, backoff));
        continue;
      }
      if (left.length === 0) return;
    }
  }

  /** A failed attempt as a log line: what its delivery history row says, but the response body. */
  private logFailedAttempt(row: DeliveryAttemptsTable, error: string | null): void {
    const next = row.next_attempt_at;
    this.log.info(
      {
        delivery_id: row.id,
        event_id: row.event_id,
        event_type: row.event_type,
        endpoint_id: row.endpoint_id,
        workspace_id: row.workspace_id,
        attempt: row.attempt,
        status_code: row.status_code,
        error_class: row.error_class,
        error,
        next_attempt_at: next,
      },
      next === null ? 'delivery attempt failed; no attempt is left (exhausted)' : `delivery attempt failed; next attempt at ${next}`,
    );
  }

  /** One transaction: the jobs still held by this claim, their attempts, the endpoints' health. */
  private async recordBatch(token: string, results: readonly Result[]): Promise<void> {
    const { deliveries: db, engine } = this.services.database;
    const now = this.services.clock();
    const completions: JobCompletion[] = [];
    const rows = new Map<string, DeliveryAttemptsTable>();
    for (const r of results) {
      const attemptNo = r.job.attempts + 1;
      // Delays run from the start of the previous attempt, so the schedule does not drift with latency.
      const next = r.outcome.ok ? undefined : nextAttemptAt(attemptNo, r.attemptedAt, this.random());
      const nextIso = next === undefined ? null : new Date(next).toISOString();
      completions.push({
        id: r.job.id,
        state: r.outcome.ok ? 'succeeded' : attemptNo >= MAX_ATTEMPTS ? 'exhausted' : 'pending',
        attempts: attemptNo,
        nextAttemptAt: nextIso,
      });
      rows.set(r.job.id, {
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
    }
    let kept: Result[] = [];
    const changes: HealthChanges = await db.transaction().execute(async (trx) => {
      const completed = await recordOutcomes(trx, engine, token, completions, [...rows.values()], now);
      kept = results.filter((r) => completed.has(r.job.id));
      const reports: AttemptReport[] = kept.map((r) => ({
        endpointId: r.job.endpoint_id,
        eventType: r.job.event_type,
        ok: r.outcome.ok,
        errorClass: r.outcome.errorClass,
        error: r.outcome.error,
        finishedAt: r.attemptedAt + r.outcome.latencyMs,
      }));
      return applyAttemptOutcomes(trx, reports, now);
    });
    if (kept.length < results.length) {
      this.log.warn(
        { dropped: results.length - kept.length, claim: token },
        'lease lost before recording: these jobs were claimed again, their newer attempts stand',
      );
    }
    logHealthChanges(this.log, changes);
    // A disabled endpoint is sent nothing more: its broker connections close now, not when idle.
    for (const d of changes.disabled) void this.transports.forget(d.endpointId);
    for (const r of kept) {
      // The log as well as the delivery history: an operator who reads only the log sees each
      // failed attempt and what follows it (the response body stays in the history).
      const row = rows.get(r.job.id);
      if (!r.outcome.ok && row) this.logFailedAttempt(row, r.outcome.error);
      const first = r.job.attempts === 0 ? r.attemptedAt - Date.parse(r.job.event_created_at) : null;
      this.observer.attempted(r.outcome.ok ? 'succeeded' : 'failed', r.outcome.errorClass, first);
    }
  }
}
