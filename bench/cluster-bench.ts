/**
 * `wsops serve --processes 1` against `--processes 2` on one database: (a) pages of 100 at
 * random depths and `/api/v1/scopes`, 50 connections each, the two servers running side by side
 * and measured in alternating rounds after the same warm-up. Page threads are off on both sides
 * (issue 28 removes them; more cores come from more processes).
 */
import { loadConfig } from '../src/config.js';
import { seedRegister } from '../src/seed/seed.js';
import { createServices } from '../src/services.js';
import { createWorkspace } from '../src/workspaces/workspaces.js';
import { freePort, type LoadResult, load, stopProcess } from './processes.js';
import type { Row } from './table.js';
import { walk } from './walk.js';
import { assetsReadKey, BENCH_SECRET, startWsops } from './wsops.js';

const CONNECTIONS = 50;
const WARM_UP_SECONDS = 2;
const ROUNDS = 2;

export interface ClusterBenchOptions {
  records: number;
  duration: number;
  databaseUrl: string;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en');

function sample<T>(items: readonly T[], n: number): T[] {
  return Array.from({ length: n }, () => items[Math.floor(Math.random() * items.length)] as T);
}

/** Polls the primary's /metrics until `n` API processes listen (the first answers /healthz sooner). */
async function allListening(internal: string, n: number): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    const text = await (await fetch(`${internal}/metrics`)).text();
    if (new RegExp(`^wsops_api_processes ${n}$`, 'm').test(text)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${n} API processes never listened`);
}

export async function clusterBench(o: ClusterBenchOptions, log: (s: string) => void): Promise<Row[]> {
  const dialect = o.databaseUrl.startsWith('sqlite:') ? 'SQLite' : 'PostgreSQL';
  const services = await createServices(loadConfig({ WSOPS_DATABASE_URL: o.databaseUrl, WSOPS_SECRET: BENCH_SECRET }));
  const now = Date.now();
  const ws = await createWorkspace(services.database.db, 'Bench', ['assets'], new Date(now).toISOString());
  log(`${dialect}: seeding ${o.records} assets`);
  await seedRegister(services, ws.id, 'assets', o.records, { seed: 'bench', now });
  const key = await assetsReadKey(services, ws.id, now);
  await services.close();
  const headers = { authorization: `Bearer ${key.key}` };
  const env = { WSOPS_PAGE_THREADS: '0' };
  const one = await freePort();
  const two = await freePort();
  const twoInternal = await freePort();
  const servers = [
    await startWsops(o.databaseUrl, one, { env }),
    await startWsops(o.databaseUrl, two, { env: { ...env, WSOPS_INTERNAL_PORT: String(twoInternal) }, serveArgs: ['--processes', '2'] }),
  ];
  try {
    await allListening(`http://127.0.0.1:${twoInternal}`, 2);
    const origins = [`http://127.0.0.1:${one}`, `http://127.0.0.1:${two}`] as const;
    log(`${dialect}: a walk for cursors, and one through each server to warm it`);
    const cursors = (await walk(`${origins[0]}/api/v1/assets`, headers, 1000)).cursors;
    await walk(`${origins[1]}/api/v1/assets`, headers, 1000);
    const pages = sample(cursors, 5000).map((c) => `/api/v1/assets?limit=100&cursor=${encodeURIComponent(c)}`);
    const runs: Record<'a' | 'scopes', [LoadResult[], LoadResult[]]> = { a: [[], []], scopes: [[], []] };
    for (let r = 0; r < ROUNDS; r++) {
      const loads: ['a' | 'scopes', string[]][] = [
        ['a', pages],
        ['scopes', ['/api/v1/scopes']],
      ];
      for (const [name, paths] of loads) {
        for (const side of [0, 1] as const) {
          log(`${dialect}: round ${r + 1}, ${name}, ${side + 1} process(es)`);
          await load(origins[side], headers, paths, CONNECTIONS, WARM_UP_SECONDS);
          runs[name][side].push(await load(origins[side], headers, paths, CONNECTIONS, o.duration));
        }
      }
    }
    const rps = (results: LoadResult[]) => results.reduce((s, x) => s + x.rps, 0) / results.length;
    const p99 = (results: LoadResult[]) => Math.max(...results.map((x) => x.p99));
    const errors = (results: LoadResult[]) => results.reduce((s, x) => s + x.errors + x.non2xx, 0);
    return (['a', 'scopes'] as const).map((name) => {
      const [single, double] = runs[name];
      return {
        benchmark: `${dialect}: ${name === 'a' ? '(a) pages of 100 at random depths' : '/api/v1/scopes'}, --processes 2 vs 1, ${CONNECTIONS} connections`,
        result: `${fmt(rps(double))} vs ${fmt(rps(single))} req/s = ${(rps(double) / rps(single)).toFixed(2)}× (p99 ${p99(double)} vs ${p99(single)} ms), errors ${errors(double) + errors(single)}`,
        goal: '',
        met: undefined,
      };
    });
  } finally {
    for (const s of servers) await stopProcess(s);
  }
}
