/**
 * Event destinations against a webhook (issue 61, ADR 52): domain actions over HTTP through one
 * `wsops serve`, their events delivered to one RabbitMQ destination (publisher confirms) or, for
 * the comparison, to one HTTP endpoint answering 200 at once. Commit → message in the queue (the
 * event's `created` to the moment an amqplib consumer in this process receives it; for HTTP, to
 * the moment the receiver process reads the request) per rate asked, rising until a rate is not
 * kept (p99 over 1 s, or the deliveries fall behind). Needs RabbitMQ on 127.0.0.1:5672.
 * `npm run bench -- --only destinations [--destination-seconds S] [--destination-rates 300,600,…]`.
 */
import type { ChildProcess } from 'node:child_process';
import { connect } from 'amqplib';
import { loadConfig } from '../src/config.js';
import { createServices, type Services } from '../src/services.js';
import { createEndpoint } from '../src/webhooks/endpoints/endpoints.js';
import { actionWorkspace } from './action-delivery-bench.js';
import { driveActions } from './action-load.js';
import { receiverStats, startReceiver, waitFor } from './delivery-load-bench.js';
import { freePort, stopProcess } from './processes.js';
import type { Row } from './table.js';
import { BENCH_SECRET, startWsops } from './wsops.js';

const TOKEN = 'bench-operator-token-0123456789abcdef';
const IN_FLIGHT = 64;
const EXCHANGE = 'wsops-bench';
const QUEUE = 'wsops-bench';

type Kind = 'rabbitmq' | 'http';

interface Step {
  rate: number;
  taken: number;
  p50: number;
  p99: number;
  max: number;
  drainSeconds: number;
  kept: boolean;
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;

/** The RabbitMQ side: a durable exchange and queue, and the latency of each message received. */
async function rabbitConsumer() {
  const model = await connect('amqp://guest:guest@127.0.0.1:5672');
  const ch = await model.createChannel();
  await ch.assertExchange(EXCHANGE, 'topic', { durable: true });
  await ch.assertQueue(QUEUE, { durable: true });
  await ch.purgeQueue(QUEUE);
  await ch.bindQueue(QUEUE, EXCHANGE, '#');
  const seen: { created: number; latency: number }[] = [];
  await ch.prefetch(1000);
  await ch.consume(QUEUE, (m) => {
    if (!m) return;
    const received = Date.now();
    const at = /"created":"([^"]+)"/.exec(m.content.toString('utf8'));
    if (at?.[1] && m.fields.routingKey !== 'endpoint.verification') {
      const c = Date.parse(at[1]);
      seen.push({ created: c, latency: received - c });
    }
    ch.ack(m);
  });
  return {
    stats(from: number, to = Number.POSITIVE_INFINITY) {
      const l = seen
        .filter((s) => s.created >= from && s.created < to)
        .map((s) => s.latency)
        .sort((a, b) => a - b);
      return { matched: l.length, p50: pct(l, 0.5), p99: pct(l, 0.99), max: l.at(-1) ?? 0 };
    },
    async close() {
      await ch.deleteQueue(QUEUE).catch(() => {});
      await ch.deleteExchange(EXCHANGE).catch(() => {});
      await model.close();
    },
  };
}

async function fixtures(services: Services, kind: Kind, rport: number) {
  const { ws, assets, personIds } = await actionWorkspace(services, `Destinations ${kind}`);
  const endpoint = await createEndpoint(services, ws, {
    url: kind === 'rabbitmq' ? 'amqp://guest:guest@127.0.0.1:5672/%2F' : `http://127.0.0.1:${rport}/actions`,
    exchange: kind === 'rabbitmq' ? EXCHANGE : undefined,
    scopes: 'assets:read',
    events: 'asset.assigned asset.returned',
  });
  return { ws, assets, personIds, endpointId: endpoint.id };
}

async function run(databaseUrl: string, kind: Kind, seconds: number, rates: readonly number[], log: (s: string) => void): Promise<Step[]> {
  const rport = await freePort();
  const receiver = kind === 'http' ? await startReceiver(rport) : undefined;
  const consumer = kind === 'rabbitmq' ? await rabbitConsumer() : undefined;
  const env = { WSOPS_DATABASE_URL: databaseUrl, WSOPS_SECRET: BENCH_SECRET, WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' };
  const services = await createServices(loadConfig(env));
  let api: ChildProcess | undefined;
  const steps: Step[] = [];
  try {
    const fx = await fixtures(services, kind, rport);
    const internalPort = await freePort();
    const internal = `http://127.0.0.1:${internalPort}`;
    api = await startWsops(databaseUrl, await freePort(), {
      env: { ...env, WSOPS_INTERNAL_PORT: String(internalPort), WSOPS_OPERATOR_TOKEN: TOKEN },
    });
    await waitFor(async () => {
      const row = await services.database.db
        .selectFrom('webhook_endpoints')
        .select('status')
        .where('id', '=', fx.endpointId)
        .executeTakeFirst();
      return row?.status === 'active';
    }, 'verification');
    const stats = async (from: number, to?: number) =>
      consumer ? consumer.stats(from, to) : receiverStats(rport, { prefix: '/actions', from, ...(to === undefined ? {} : { to }) });
    const drive = (rate: number, s: number) =>
      driveActions({ ...fx, internal, token: TOKEN, workspaceId: fx.ws, rate, seconds: s, inFlight: IN_FLIGHT });
    // Warm-up: cold code, the connection to the broker.
    const warm0 = Date.now();
    const warm = await drive(200, 2);
    await waitFor(async () => (await stats(warm0)).matched >= warm.ok, 'warm-up deliveries', 120_000);
    for (const rate of rates) {
      const t0 = Date.now();
      const d = await drive(rate, seconds);
      const t1 = Date.now();
      await waitFor(async () => (await stats(t0)).matched >= d.ok, `deliveries at ${rate}/s`, 300_000);
      const t2 = Date.now();
      const s = await stats(t0, t1);
      const taken = Math.round(d.ok / ((t1 - t0) / 1000));
      const drainSeconds = (t2 - t1) / 1000;
      // Kept: the actions were taken at the rate asked (within 5%), p99 ≤ 1 s, the queue drained within 2 s.
      const kept = taken >= rate * 0.95 && s.p99 <= 1000 && drainSeconds <= 2 && d.errors === 0;
      steps.push({ rate, taken, p50: s.p50, p99: s.p99, max: s.max, drainSeconds, kept });
      log(
        `${kind} ${databaseUrl.split(':')[0]} ${rate}/s asked: ${taken}/s taken, commit → received p50 ${s.p50} ms, p99 ${s.p99} ms, max ${s.max} ms, drained in ${drainSeconds.toFixed(1)} s, errors ${d.errors}${d.firstError ? ` (first: ${d.firstError.slice(0, 160)})` : ''}: ${kept ? 'kept' : 'NOT kept'}\n`,
      );
      if (!kept) break;
    }
    // The attempts themselves (send → broker confirm, or → HTTP answer), to tell the wire from the queue.
    const lat = await services.database.db
      .selectFrom('delivery_attempts')
      .select((eb) => [
        eb.fn.avg<number>('latency_ms').as('avg'),
        eb.fn.max<number>('latency_ms').as('max'),
        eb.fn.countAll<number>().as('n'),
      ])
      .where('endpoint_id', '=', fx.endpointId)
      .executeTakeFirst();
    log(`${kind}: ${lat?.n} attempts, latency avg ${Math.round(Number(lat?.avg))} ms, max ${lat?.max} ms\n`);
  } finally {
    if (api) await stopProcess(api);
    if (receiver) await stopProcess(receiver);
    await consumer?.close();
    await services.close();
  }
  return steps;
}

export interface DestinationBenchOptions {
  /** An empty database per kind: `sqlite` makes a file of its own; a PostgreSQL URL per kind is made by `fresh`. */
  fresh: (kind: Kind) => Promise<{ url: string; drop: () => Promise<void> }>;
  dialect: string;
  seconds: number;
  rates: readonly number[];
}

/**
 * Both kinds on one database dialect, the same steps for each; the rows say whether a RabbitMQ
 * destination keeps p99 ≤ 1 s at 300 actions/s, and whether its highest steady rate is at least
 * 80% of the webhook's, both measured in this run.
 */
export async function destinationBench(o: DestinationBenchOptions, log: (s: string) => void): Promise<Row[]> {
  const results = {} as Record<Kind, Step[]>;
  for (const kind of ['rabbitmq', 'http'] as const) {
    const { url, drop } = await o.fresh(kind);
    try {
      results[kind] = await run(url, kind, o.seconds, o.rates, log);
    } finally {
      await drop();
    }
  }
  const at300 = (kind: Kind) => results[kind].find((s) => s.rate === 300);
  const highest = (kind: Kind) => results[kind].filter((s) => s.kept).at(-1)?.rate ?? 0;
  const r300 = at300('rabbitmq');
  const ratio = highest('http') > 0 ? highest('rabbitmq') / highest('http') : 0;
  return [
    {
      benchmark: `${o.dialect}: actions → RabbitMQ queue at 300/s, commit → received`,
      result: r300
        ? `p50 ${r300.p50} ms, p99 ${r300.p99} ms (${r300.taken}/s taken); webhook p99 ${at300('http')?.p99 ?? '-'} ms`
        : 'not run',
      goal: 'p99 ≤ 1 s',
      met: r300 ? r300.kept : undefined,
    },
    {
      benchmark: `${o.dialect}: highest steady rate, RabbitMQ vs webhook (same run)`,
      result: `${highest('rabbitmq')}/s vs ${highest('http')}/s (${(ratio * 100).toFixed(0)}%; steps ${o.rates.join(', ')}/s)`,
      goal: '≥ 80% of the webhook',
      met: highest('http') > 0 ? ratio >= 0.8 : undefined,
    },
  ];
}
