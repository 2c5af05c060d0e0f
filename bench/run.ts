/**
 * `npm run bench`: prints a table of every benchmark and writes it to bench/results/latest.md.
 *   npm run bench -- [--records N] [--duration S] [--only read|write|webhooks|deliveries|client|console|cli|processes|scim|events|destinations] [--dialects sqlite,postgres]
 *     [--scim-people N] (scim: the directory's size, 100,000 by default)
 *     [--events N] (events: the workspace's events, 1,000,000 by default, beside --records assets)
 *     [--destination-seconds S] [--destination-rates 300,600,…] (destinations: domain actions over HTTP delivered to one
 *     RabbitMQ destination and, the baseline, one webhook; 20 s a step, rising from 300/s until a step is not kept; needs RabbitMQ)
 *     [--delivery-rate N] [--delivery-duration S] (webhooks/deliveries: the sustained and fairness rows; 1,000 events/s for 120 s
 *     by default, e.g. --delivery-duration 20s for a short run on a shared machine)
 *     [--fairness-receivers 7000,5000-9500,0] (how A's flooded receiver answers, one fairness row each)
 *     [--action-rate N] [--action-duration S] [--action-setups one,split] (deliveries: events born from domain actions over
 *     HTTP, issue 39; 300/s for 120 s, both setups by default) [--actions-only] (those rows alone)
 *     [--console-scale F] (console: records and delivery attempts are 1,000,000 × F)
 *   npm run bench -- --soak SECONDS [--records N] [--dialects sqlite|postgres]   the soak alone (bench/soak.ts)
 *   WSOPS_BENCH_SERVER_LOG=FILE: the servers' logs (warnings and errors) are appended to FILE instead of dropped.
 *   WSOPS_BENCH_API_FLAGS / WSOPS_BENCH_WORKER_FLAGS='--cpu-prof …': Node flags of the action rows' servers.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { actionDeliveryBench } from './action-delivery-bench.js';
import { cliBench } from './cli-bench.js';
import { clientBench } from './client-bench.js';
import { clusterBench } from './cluster-bench.js';
import { consoleBench } from './console-bench.js';
import { deliveryLoadBench } from './delivery-load-bench.js';
import { destinationBench } from './destination-delivery-bench.js';
import { eventsBench } from './events-bench.js';
import { ROOT } from './processes.js';
import { readBench } from './read-bench.js';
import { scimBench } from './scim-bench.js';
import { soakBench } from './soak.js';
import { printTable, type Row } from './table.js';
import { webhookBench } from './webhook-bench.js';
import { writeBench } from './write-bench.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

const soakSeconds = process.argv.includes('--soak') ? Number(arg('soak', '600')) : undefined;
// The soak measures stability, not depth: a smaller register seeds quickly.
const records = Number(arg('records', soakSeconds === undefined ? '1000000' : '100000'));
const duration = Number(arg('duration', '10'));
const only = arg('only', 'all');
const dialects = arg('dialects', 'sqlite,postgres').split(',');
const deliveryRate = Number(arg('delivery-rate', '1000'));
const deliverySeconds = Number(arg('delivery-duration', '120').replace(/s$/, ''));
const fairnessReceivers = arg('fairness-receivers', '7000').split(',');
if (!fairnessReceivers.every((r) => /^\d+(-\d+)?$/.test(r))) {
  process.stderr.write(
    "--fairness-receivers takes how A's receiver answers, comma-separated: 7000 (ms), 5000-9500 (random in a range), 0 (at once)\n",
  );
  process.exit(2);
}
if (!(deliveryRate > 0) || !Number.isInteger(deliverySeconds) || deliverySeconds < 10) {
  process.stderr.write('--delivery-rate takes events per second (> 0); --delivery-duration whole seconds, at least 10 (e.g. 20s)\n');
  process.exit(2);
}
// The worker's Node flags in the delivery rows, e.g. WSOPS_BENCH_WORKER_FLAGS='--cpu-prof --cpu-prof-dir=/tmp/prof'.
const actionRate = Number(arg('action-rate', '300'));
const actionSeconds = Number(arg('action-duration', '120').replace(/s$/, ''));
const actionSetups = arg('action-setups', 'one,split').split(',');
if (
  !(actionRate > 0) ||
  !Number.isInteger(actionSeconds) ||
  actionSeconds < 10 ||
  !actionSetups.every((s) => s === 'one' || s === 'split')
) {
  process.stderr.write(
    '--action-rate takes actions per second (> 0); --action-duration whole seconds, at least 10; --action-setups one, split or both\n',
  );
  process.exit(2);
}
const actionsOnly = process.argv.includes('--actions-only');
// One kind of delivery row (the action rows are then skipped): the sustained one, or the fairness ones.
const deliveryRows = process.argv.includes('--sustained-only')
  ? 'sustained'
  : process.argv.includes('--fairness-only')
    ? 'fairness'
    : undefined;
// The API's (or the one serve's) Node flags in the action rows, e.g. '--cpu-prof --cpu-prof-dir=/tmp/prof'.
const apiFlags = process.env.WSOPS_BENCH_API_FLAGS?.split(' ').filter(Boolean) ?? [];
const workerFlags = process.env.WSOPS_BENCH_WORKER_FLAGS?.split(' ').filter(Boolean) ?? [];
const log = (s: string) => process.stderr.write(`[bench] ${s}\n`);

const dataDir = join(ROOT, 'bench', '.data');
rmSync(dataDir, { recursive: true, force: true });
mkdirSync(dataDir, { recursive: true });
const PG_ADMIN = process.env.WSOPS_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

// Benchmark databases are named per checkout: two worktrees benchmarking at once on the shared
// server must not drop each other's database; a rerun from the same checkout still replaces its own.
const dbTag = createHash('sha1').update(ROOT).digest('hex').slice(0, 8);

async function dropPostgres(base: string): Promise<void> {
  const name = `${base}_${dbTag}`;
  const c = new pg.Client({ connectionString: PG_ADMIN });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  // Flush what the load left dirty, so a checkpoint does not land in the next measurement.
  await c.query('CHECKPOINT');
  await c.end();
}

async function freshPostgres(base: string): Promise<string> {
  const name = `${base}_${dbTag}`;
  const c = new pg.Client({ connectionString: PG_ADMIN });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const url = new URL(PG_ADMIN);
  url.pathname = `/${name}`;
  return url.toString();
}

if (soakSeconds !== undefined) {
  if (!Number.isInteger(soakSeconds) || soakSeconds < 20) {
    process.stderr.write('--soak takes whole seconds, at least 20 (600 for the full soak)\n');
    process.exit(2);
  }
  const d = dialects[0] ?? 'sqlite';
  const url = d === 'sqlite' ? `sqlite:${join(dataDir, 'soak.db')}` : await freshPostgres('wsops_bench_soak');
  const result = await soakBench({ seconds: soakSeconds, databaseUrl: url, records }, log);
  if (d !== 'sqlite') await dropPostgres('wsops_bench_soak');
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', 'soak.md'), `${result.table}\n`);
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(result.ok ? 0 : 1);
}

const sections: string[] = [];
const header = `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; ${new Date().toISOString().slice(0, 10)}; ${records.toLocaleString('en')} records, ${duration} s per load run.`;
process.stdout.write(`${header}\n`);

if (only === 'all' || only === 'cli') {
  sections.push(printTable('CLI start-up', cliBench({ dataDir }, log)));
}

if (only === 'all' || only === 'read') {
  const rows: Row[] = [];
  const plans: string[] = [];
  for (const d of dialects) {
    const url = d === 'sqlite' ? `sqlite:${join(dataDir, 'read.db')}` : await freshPostgres('wsops_bench_read');
    // Each dialect is measured against its own naive baseline, in the same run.
    const r = await readBench({ records, duration, databaseUrl: url }, log);
    if (d === 'sqlite') rmSync(join(dataDir, 'read.db'), { force: true });
    else await dropPostgres('wsops_bench_read');
    rows.push(...r.rows);
    plans.push(`${d} query plan of the updated_since walk:\n\n\`\`\`\n${r.plan}\n\`\`\``);
  }
  sections.push(printTable('Read API', rows), ...plans);
  process.stdout.write(`\n${plans.join('\n\n')}\n`);
}

if (only === 'all' || only === 'scim') {
  const rows: Row[] = [];
  const people = Number(arg('scim-people', '100000'));
  for (const d of dialects) {
    const url = d === 'sqlite' ? `sqlite:${join(dataDir, 'scim.db')}` : await freshPostgres('wsops_bench_scim');
    rows.push(...(await scimBench({ databaseUrl: url, dialect: d, people }, log)));
    if (d === 'sqlite') rmSync(join(dataDir, 'scim.db'), { force: true });
    else await dropPostgres('wsops_bench_scim');
  }
  sections.push(printTable('SCIM reads of a large directory', rows));
}

if (only === 'all' || only === 'events') {
  const rows: Row[] = [];
  const plans: string[] = [];
  const events = Number(arg('events', '1000000'));
  for (const d of dialects) {
    const url = d === 'sqlite' ? `sqlite:${join(dataDir, 'events.db')}` : await freshPostgres('wsops_bench_events');
    const r = await eventsBench({ databaseUrl: url, dialect: d, records, events }, log);
    if (d === 'sqlite') rmSync(join(dataDir, 'events.db'), { force: true });
    else await dropPostgres('wsops_bench_events');
    rows.push(...r.rows);
    plans.push(`${d} query plans of a page of events:\n\n\`\`\`\n${r.plan}\n\`\`\``);
  }
  sections.push(printTable('Events API pages', rows), ...plans);
  process.stdout.write(`\n${plans.join('\n\n')}\n`);
}

if (only === 'all' || only === 'destinations') {
  const rows: Row[] = [];
  const seconds = Number(arg('destination-seconds', '20'));
  const rates = arg('destination-rates', '300,600,900,1200,1500,2000').split(',').map(Number);
  for (const d of dialects) {
    const fresh = async (kind: string) => {
      if (d === 'sqlite') {
        const file = join(dataDir, `destinations-${kind}.db`);
        return { url: `sqlite:${file}`, drop: async () => rmSync(file, { force: true }) };
      }
      const name = `wsops_bench_destinations_${kind}`;
      return { url: await freshPostgres(name), drop: () => dropPostgres(name) };
    };
    rows.push(...(await destinationBench({ fresh, dialect: d, seconds, rates }, log)));
  }
  sections.push(printTable('Event destinations (RabbitMQ) beside a webhook', rows));
}

if (only === 'all' || only === 'write') {
  const rows: Row[] = [];
  for (const d of dialects) {
    const url = d === 'sqlite' ? `sqlite:${join(dataDir, 'write.db')}` : await freshPostgres('wsops_bench_write');
    rows.push(...(await writeBench({ databaseUrl: url, records, duration, dialect: d }, log)));
    if (d === 'sqlite') rmSync(join(dataDir, 'write.db'), { force: true });
    else await dropPostgres('wsops_bench_write');
  }
  sections.push(printTable('Write side (system of record)', rows));
}

if (only === 'all' || only === 'client') {
  // The mirror's goal is about SQLite; the server it reads from is SQLite too.
  const url = `sqlite:${join(dataDir, 'client.db')}`;
  const rows = await clientBench({ records, databaseUrl: url, dataDir }, log);
  rmSync(join(dataDir, 'client.db'), { force: true });
  sections.push(printTable('Client and mirror', rows));
}

if (only === 'all' || only === 'webhooks' || only === 'deliveries') {
  const rows: Row[] = [];
  for (const d of dialects) {
    if (only !== 'deliveries') {
      const url = d === 'sqlite' ? `sqlite:${join(dataDir, 'webhooks.db')}` : await freshPostgres('wsops_bench_webhooks');
      rows.push(...(await webhookBench({ databaseUrl: url, events: 10_000 }, log)));
      if (d === 'sqlite') rmSync(join(dataDir, 'webhooks.db'), { force: true });
      else await dropPostgres('wsops_bench_webhooks');
    }
    if (only === 'deliveries' && deliveryRows === undefined) {
      const url = d === 'sqlite' ? `sqlite:${join(dataDir, 'actions.db')}` : await freshPostgres('wsops_bench_actions');
      rows.push(
        ...(await actionDeliveryBench(
          { databaseUrl: url, rate: actionRate, seconds: actionSeconds, setups: actionSetups as ('one' | 'split')[], apiFlags },
          log,
        )),
      );
      if (d === 'sqlite') rmSync(join(dataDir, 'actions.db'), { force: true });
      else await dropPostgres('wsops_bench_actions');
      if (actionsOnly) continue;
    }
    const url = d === 'sqlite' ? `sqlite:${join(dataDir, 'deliveries.db')}` : await freshPostgres('wsops_bench_deliveries');
    rows.push(
      ...(await deliveryLoadBench(
        {
          databaseUrl: url,
          rate: deliveryRate,
          seconds: deliverySeconds,
          workerFlags,
          only: deliveryRows,
          fairnessReceivers,
        },
        log,
      )),
    );
    if (d === 'sqlite') rmSync(join(dataDir, 'deliveries.db'), { force: true });
    else await dropPostgres('wsops_bench_deliveries');
  }
  sections.push(printTable('Webhooks', rows));
}

if (only === 'all' || only === 'console') {
  const rows: Row[] = [];
  const scale = Number(arg('console-scale', '1'));
  const size = Math.round(1_000_000 * scale);
  for (const d of dialects) {
    const url = d === 'sqlite' ? `sqlite:${join(dataDir, 'console.db')}` : await freshPostgres('wsops_bench_console');
    rows.push(...(await consoleBench({ databaseUrl: url, records: size, attempts: size, samples: 50, duration }, log)));
    if (d === 'sqlite') rmSync(join(dataDir, 'console.db'), { force: true });
    else await dropPostgres('wsops_bench_console');
  }
  sections.push(printTable('Console', rows));
}

if (only === 'all' || only === 'processes') {
  const rows: Row[] = [];
  for (const d of dialects) {
    const url = d === 'sqlite' ? `sqlite:${join(dataDir, 'processes.db')}` : await freshPostgres('wsops_bench_processes');
    rows.push(...(await clusterBench({ records, duration, databaseUrl: url }, log)));
    if (d === 'sqlite') rmSync(join(dataDir, 'processes.db'), { force: true });
    else await dropPostgres('wsops_bench_processes');
  }
  sections.push(printTable('More processes (wsops serve --processes)', rows));
}

mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
writeFileSync(join(ROOT, 'bench', 'results', 'latest.md'), `${header}\n\n${sections.join('\n\n')}\n`);
rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
