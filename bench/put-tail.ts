/**
 * Where a single PUT's tail comes from on SQLite, in-process (no HTTP): N people imported, then
 * PUTs at a fixed rate, each timed from its scheduled start, and each
 * PUT's own service time (from the call to its answer), which excludes waiting for its turn.
 * `--autocheckpoint 1000` puts back SQLite's checkpoints inside commits (before ADR 36).
 *   node --import tsx bench/put-tail.ts [--records 100000] [--rate 500] [--seconds 10]
 */
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { registerByPath } from '../src/registers/catalogue.js';
import type { Register } from '../src/registers/define.js';
import { createServices } from '../src/services.js';
import { createWorkspace, parseModules } from '../src/store/workspaces.js';
import { importRecords } from '../src/writes/import.js';
import { putRecord } from '../src/writes/record-writes.js';
import { importBody, person } from './write-bench.js';
import { BENCH_SECRET } from './wsops.js';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    rate: { type: 'string', default: '500' },
    seconds: { type: 'string', default: '10' },
    autocheckpoint: { type: 'string' },
  },
});
const path = `/tmp/put-tail-${process.pid}.db`;
const services = await createServices(loadConfig({ WSOPS_DATABASE_URL: `sqlite:${path}`, WSOPS_SECRET: BENCH_SECRET }));
const ws = await createWorkspace(services.database.db, 'tail', parseModules('all'), new Date().toISOString());
await importRecords(services, ws.id, Readable.from(importBody(Number(values.records), 'm')), { actor: 'bench' });
if (values.autocheckpoint !== undefined) services.database.sqlite?.exec(`PRAGMA wal_autocheckpoint = ${Number(values.autocheckpoint)}`);
const people = registerByPath('people') as Register;
const rate = Number(values.rate);
const total = rate * Number(values.seconds);
const latencies: { ms: number; service: number }[] = [];
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const pending: Promise<void>[] = [];
for (let i = 0; i < total; i++) {
  const due = t0 + (i * 1000) / rate;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  const body = JSON.parse(person(i % 2000, 'put')).record;
  body.job_title = `Engineer ${i}`;
  body.manager_id = null;
  const started = performance.now();
  pending.push(
    putRecord(services, ws.id, people, body.id, body).then(() => {
      const end = performance.now();
      latencies.push({ ms: end - due, service: end - started });
    }),
  );
}
await Promise.all(pending);
const cpu = process.cpuUsage(cpu0);
const sorted = [...latencies].sort((a, b) => a.ms - b.ms);
const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]?.ms.toFixed(1);
process.stdout.write(
  `${total} PUTs at ${rate}/s: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, p99.9 ${at(0.999)} ms, max ${at(1)} ms; ${((cpu.user + cpu.system) / total).toFixed(0)} µs CPU/PUT; load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}\n`,
);
const service = latencies.map((l) => l.service).sort((a, b) => a - b);
const sat = (q: number) => service[Math.min(service.length - 1, Math.floor(q * service.length))]?.toFixed(1);
process.stdout.write(
  `service time alone (call to answer): p50 ${sat(0.5)} ms, p99 ${sat(0.99)} ms, p99.9 ${sat(0.999)} ms; over 10 ms: ${service.filter((s) => s > 10).length}\n`,
);
await services.close();
rmSync(path, { force: true });
