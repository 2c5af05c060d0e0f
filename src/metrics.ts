/**
 * Prometheus metrics of one process (ADR 8). Each process builds its own Registry, never
 * prom-client's global one, so tests can build several services side by side. Served as text on
 * the internal listener only (`GET /metrics`).
 *
 * Label sets are bounded: the route is the route pattern (`/api/v1/assets/:id`), never the URL,
 * and an unmatched request is `route="unmatched"`; the error class is the dispatcher's small
 * fixed set. Database gauges are read at scrape time with one grouped query each.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  AggregatorRegistry,
  Counter,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  type MetricObjectWithValues,
  type MetricValue,
  Registry,
} from 'prom-client';
import { type Clock, systemClock } from './clock.js';
import type { KeyCacheStats } from './keys/key-cache.js';
import { EXPIRING_DAYS } from './keys/key-terms.js';
import { countExpiringKeys } from './keys/keys.js';
import type { Database } from './store/database.js';
import type { DeliveryObserver } from './webhooks/delivery-observer.js';
import { BACKLOG_METRICS, registerBacklogMetrics } from './webhooks/queue/backlog-metrics.js';

/** Seconds; covers a fast page (1 ms) to a pathological one (10 s). */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds from an event's commit to its first attempt; the goal is p99 ≤ 250 ms. */
const COMMIT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const REFUSALS = new Set([401, 403, 429]);
const JOB_STATES = ['pending', 'held', 'succeeded', 'exhausted'] as const;
const ENDPOINT_STATES = ['unverified', 'active', 'disabled'] as const;
/** The gauges read from the database: the same whichever process reads them, so one process does. */
const DATABASE_GAUGES = [
  'wsops_delivery_jobs',
  'wsops_webhook_endpoints',
  'wsops_api_keys_expiring_soon',
  ...Object.values(BACKLOG_METRICS),
];

/** prom-client's default metrics that record from a timer or an observer, and the method each calls there. */
const RECORDED_OUTSIDE_SCRAPES = [
  ['nodejs_gc_duration_seconds', 'observe'],
  ['nodejs_eventloop_lag_seconds', 'set'],
] as const;

/** One registry's metrics as JSON, the form processes exchange (src/cluster-metrics.ts). */
export type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

export class Metrics implements DeliveryObserver {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly duration: Histogram<'method' | 'route'>;
  private readonly refused: Counter<'status' | 'route'>;
  private readonly attempts: Counter<'outcome' | 'error_class'>;
  private readonly commitToAttempt: Histogram;
  private readonly alertMails: Counter<'outcome'>;
  /** The other processes of a `wsops serve --processes N`, asked at each scrape (serve-command.ts). */
  private peers: (() => Promise<MetricsJson[]>) | undefined;

  constructor(
    private readonly database: Database | undefined,
    clock: Clock = systemClock,
  ) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'wsops_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.duration = new Histogram({
      name: 'wsops_http_request_duration_seconds',
      help: 'Time from receiving a request to sending its response, by method and route pattern.',
      labelNames: ['method', 'route'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.refused = new Counter({
      name: 'wsops_http_refused_total',
      help: 'Requests refused as unauthenticated (401), forbidden (403) or rate limited (429).',
      labelNames: ['status', 'route'],
      registers,
    });
    this.attempts = new Counter({
      name: 'wsops_delivery_attempts_total',
      help: 'Webhook delivery attempts recorded by this process, by outcome and error class ("none" on success).',
      labelNames: ['outcome', 'error_class'],
      registers,
    });
    this.commitToAttempt = new Histogram({
      name: 'wsops_delivery_commit_to_attempt_seconds',
      help: "Time from an event's commit to the first attempt of each of its deliveries.",
      buckets: COMMIT_BUCKETS,
      registers,
    });
    this.alertMails = new Counter({
      name: 'wsops_alert_mails_total',
      help: 'Failure alert mails tried by this process: sent, failed (retried later) or given_up (after the last retry).',
      labelNames: ['outcome'],
      registers,
    });
    const db = this.database;
    new Gauge({
      name: 'wsops_delivery_jobs',
      help: 'Delivery jobs in the queue table, by state (read from the database at scrape time).',
      labelNames: ['state'],
      registers,
      async collect() {
        if (!db) return;
        const counts = await groupCount(db, 'SELECT state AS k, COUNT(*) AS n FROM delivery_jobs GROUP BY state');
        for (const state of JOB_STATES) this.set({ state }, counts.get(state) ?? 0);
      },
    });
    new Gauge({
      name: 'wsops_webhook_endpoints',
      help: 'Webhook endpoints, by status (read from the database at scrape time).',
      labelNames: ['state'],
      registers,
      async collect() {
        if (!db) return;
        const counts = await groupCount(db, 'SELECT status AS k, COUNT(*) AS n FROM webhook_endpoints GROUP BY status');
        for (const state of ENDPOINT_STATES) this.set({ state }, counts.get(state) ?? 0);
      },
    });
    if (db) registerBacklogMetrics(this.registry, db, clock);
  }

  /** One try to mail a failure alert. */
  alertMail(outcome: 'sent' | 'failed' | 'given_up'): void {
    this.alertMails.inc({ outcome });
  }

  /** Valid API keys expiring within 14 days, every workspace (ADR 29), counted at scrape time against `clock`. */
  observeExpiringKeys(clock: () => number): void {
    const db = this.database;
    new Gauge({
      name: 'wsops_api_keys_expiring_soon',
      help: `Valid API keys that expire within ${EXPIRING_DAYS} days, all workspaces (read from the database at scrape time). Roll them before they expire.`,
      registers: [this.registry],
      async collect() {
        if (db) this.set(await countExpiringKeys(db.db, clock()));
      },
    });
  }

  /**
   * The key cache's counts (ADR 14), read at scrape time: the request path only increments
   * plain numbers, no labelled counter per request.
   */
  observeKeyCache(cache: { stats(): KeyCacheStats }): void {
    const registers = [this.registry];
    new Counter({
      name: 'wsops_key_cache_lookups_total',
      help: 'Key lookups by authentication: hit (from the cache), miss (read and cached), bypass (read; the cache could not be trusted or is off).',
      labelNames: ['result'],
      registers,
      collect() {
        const s = cache.stats();
        this.reset();
        this.inc({ result: 'hit' }, s.hits);
        this.inc({ result: 'miss' }, s.misses);
        this.inc({ result: 'bypass' }, s.bypassed);
      },
    });
    new Counter({
      name: 'wsops_key_cache_invalidations_total',
      help: 'Invalidations the key cache received: change notifications, a moved version stamp, its listener lost or back.',
      registers,
      collect() {
        this.reset();
        this.inc(cache.stats().invalidations);
      },
    });
    new Gauge({
      name: 'wsops_key_cache_entries',
      help: 'Keys held in the key cache.',
      registers,
      collect() {
        this.set(cache.stats().entries);
      },
    });
    new Gauge({
      name: 'wsops_key_cache_trusted',
      help: 'Whether the last authentication could use the key cache (PostgreSQL: its LISTEN session was up); with several processes, 1 only if it could in all.',
      registers,
      aggregator: 'min',
      collect() {
        this.set(cache.stats().trusted ? 1 : 0);
      },
    });
  }

  /** The primary of `wsops serve --processes N`: how many API processes listen now. */
  observeApiProcesses(serving: () => number): void {
    new Gauge({
      name: 'wsops_api_processes',
      help: 'API processes listening on the public port (wsops serve --processes N; the primary replaces one that stops).',
      registers: [this.registry],
      collect() {
        this.set(serving());
      },
    });
  }

  /**
   * Process metrics (RSS, heap, event loop lag, GC): once per process, by `wsops serve`. Two of
   * them record from a callback of their own, outside any scrape (the GC observer, and the event
   * loop lag's setImmediate): an exception there reaches no caller and would end the process, as
   * a label Object.prototype had gained once did (issue 56). Their recording is guarded: a
   * failing sample is dropped and `onError` told, the first time for each metric (the same fault
   * would repeat at every collection).
   */
  collectProcessMetrics(onError: (err: unknown, metric: string) => void = () => {}): void {
    collectDefaultMetrics({ register: this.registry });
    for (const [name, method] of RECORDED_OUTSIDE_SCRAPES) {
      const metric = this.registry.getSingleMetric(name) as unknown as Record<string, (...args: unknown[]) => void> | undefined;
      const record = metric?.[method]?.bind(metric);
      if (!metric || !record) continue;
      let told = false;
      metric[method] = (...args: unknown[]) => {
        try {
          record(...args);
        } catch (err) {
          if (!told) onError(err, name);
          told = true;
        }
      };
    }
  }

  /**
   * The labelled series of each (method, route, status), resolved once: prom-client hashes a
   * label object on every call, which cost more than the rest of the hook. Bounded: routes are
   * patterns, and Node's parser knows a fixed set of methods.
   */
  private readonly httpSeries = new Map<string, { inc: () => void; observe: (seconds: number) => void }>();

  private observeHttp(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let series = this.httpSeries.get(key);
    if (!series) {
      const requests = this.requests.labels({ method, route, status: String(status) });
      const refused = REFUSALS.has(status) ? this.refused.labels({ status: String(status), route }) : undefined;
      const duration = this.duration.labels({ method, route });
      series = {
        inc: () => {
          requests.inc();
          refused?.inc();
        },
        observe: (s) => duration.observe(s),
      };
      this.httpSeries.set(key, series);
    }
    series.inc();
    series.observe(seconds);
  }

  /**
   * The onResponse hook of one route, its pattern bound when the route is declared (Fastify's
   * `request.routeOptions` builds a fresh object on every read).
   */
  routeHook(route: string) {
    return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
      this.observeHttp(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
      done();
    };
  }

  /** The app-wide onResponse hook: counts what no route answered (`route="unmatched"`). */
  readonly unmatchedHook = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    if (request.is404) this.observeHttp(request.method, 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  };

  /**
   * Counts every request of `app`: each route gets its own hook as it is declared, so call this
   * before any route is added.
   */
  instrument(app: FastifyInstance): void {
    app.addHook('onRoute', (route) => {
      const hooks = route.onResponse === undefined ? [] : Array.isArray(route.onResponse) ? route.onResponse : [route.onResponse];
      route.onResponse = [...hooks, this.routeHook(route.url)] as typeof route.onResponse;
    });
    app.addHook('onResponse', this.unmatchedHook);
  }

  attempted(outcome: 'succeeded' | 'failed', errorClass: string | null, commitToAttemptMs: number | null): void {
    this.attempts.inc({ outcome, error_class: errorClass ?? 'none' });
    if (commitToAttemptMs !== null) this.commitToAttempt.observe(Math.max(0, commitToAttemptMs) / 1000);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * This process's metrics and, once `gatherFrom` was called, those of the other processes, added
   * up: counters and histograms summed, gauges summed unless they say otherwise (prom-client's
   * `aggregator`), process start time left out.
   */
  async text(): Promise<string> {
    if (!this.peers) return this.registry.metrics();
    const all = [await this.json(), ...(await this.peers())];
    return AggregatorRegistry.aggregate(all).metrics();
  }

  json(): Promise<MetricsJson> {
    return this.registry.getMetricsAsJSON() as Promise<MetricsJson>;
  }

  /** Makes `text()` add the metrics of the processes `peers` asks (the primary of a cluster). */
  gatherFrom(peers: () => Promise<MetricsJson[]>): void {
    this.peers = peers;
  }

  /**
   * Leaves the database gauges to another process (the API processes of a cluster: the primary
   * reads them once, instead of every process reading and the sum counting each job N times).
   */
  dropDatabaseGauges(): void {
    for (const name of DATABASE_GAUGES) this.registry.removeSingleMetric(name);
  }
}

/**
 * One grouped count. On SQLite the read-only connection is used: it reads committed data and
 * never queues behind a writer's transaction.
 */
async function groupCount(database: Database, query: string): Promise<Map<string, number>> {
  const rows = await database.engine.readCommitted<{ k: string; n: number | string }>(query);
  return new Map(rows.map((r) => [r.k, Number(r.n)]));
}
