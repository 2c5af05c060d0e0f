/**
 * The client and the mirror against a real server process (SQLite): mirroring N assets into an
 * empty SQLite copy end to end, an incremental run with nothing changed, and the cost of
 * `list()` over a raw fetch walk of the same pages.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { WsopsClient } from '@wsops/client';
import { MIRROR_REGISTERS, openStore, syncOnce } from '@wsops/client/mirror';
import { loadConfig } from '../src/config.js';
import { seedRegister } from '../src/seed/seed.js';
import { createServices } from '../src/services.js';
import { createWorkspace } from '../src/workspaces/workspaces.js';
import { freePort, stopProcess } from './processes.js';
import type { Row } from './table.js';
import { assetsReadKey, BENCH_SECRET, startWsops } from './wsops.js';

export async function clientBench(o: { records: number; databaseUrl: string; dataDir: string }, log: (s: string) => void): Promise<Row[]> {
  const services = await createServices(loadConfig({ WSOPS_DATABASE_URL: o.databaseUrl, WSOPS_SECRET: BENCH_SECRET }));
  const now = Date.now();
  const ws = await createWorkspace(services.database.db, 'Bench', ['assets'], new Date(now).toISOString());
  log(`client: seeding ${o.records} assets`);
  await seedRegister(services, ws.id, 'assets', o.records, { seed: 'bench', now });
  const key = await assetsReadKey(services, ws.id, now);
  await services.close();
  const port = await freePort();
  const server = await startWsops(o.databaseUrl, port);
  const baseUrl = `http://127.0.0.1:${port}`;
  const rows: Row[] = [];
  try {
    const client = new WsopsClient({ apiKey: key.key, baseUrl });
    const assets = MIRROR_REGISTERS.filter((r) => r.path === 'assets');

    // Raw fetch walk, then list(), alternated twice; the best of each.
    const raw = async () => {
      const t = performance.now();
      let n = 0;
      let cursor: string | null = null;
      do {
        const res = await fetch(`${baseUrl}/api/v1/assets?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {
          headers: { authorization: `Bearer ${key.key}` },
        });
        const page = (await res.json()) as { data: unknown[]; next_cursor: string | null };
        n += page.data.length;
        cursor = page.next_cursor;
      } while (cursor);
      return { n, s: (performance.now() - t) / 1000 };
    };
    const viaList = async () => {
      const t = performance.now();
      let n = 0;
      for await (const _ of client.assets.list({ limit: 1000 })) n++;
      return { n, s: (performance.now() - t) / 1000 };
    };
    let rawBest = Number.POSITIVE_INFINITY;
    let listBest = Number.POSITIVE_INFINITY;
    let total = 0;
    for (let i = 0; i < 2; i++) {
      const r = await raw();
      const l = await viaList();
      rawBest = Math.min(rawBest, r.s);
      listBest = Math.min(listBest, l.s);
      total = l.n;
    }
    const overhead = (listBest / rawBest - 1) * 100;
    rows.push({
      benchmark: `client: list() over ${total.toLocaleString('en')} records vs raw fetch walk`,
      result: `${overhead.toFixed(1)} % (${listBest.toFixed(2)} s vs ${rawBest.toFixed(2)} s)`,
      goal: '< 10 %',
      met: overhead < 10,
    });

    const file = join(o.dataDir, 'mirror.db');
    rmSync(file, { force: true });
    const store = await openStore(`sqlite:${file}`);
    try {
      log('client: mirroring into an empty SQLite copy');
      const first = await syncOnce({ client, store, registers: assets });
      const rate = first.upserted / (first.durationMs / 1000);
      rows.push({
        benchmark: `mirror: ${first.upserted.toLocaleString('en')} records into an empty SQLite copy`,
        result: `${Math.round(rate).toLocaleString('en')} records/s (${(first.durationMs / 1000).toFixed(1)} s)`,
        goal: '≥ 50,000 records/s',
        met: rate >= 50_000,
      });
      // Nothing changed since; a watermark in the past makes the overlap window empty of changes.
      const idle = await syncOnce({ client, store, registers: assets });
      rows.push({
        benchmark: 'mirror: incremental run, nothing changed',
        result: `${idle.durationMs} ms (${idle.upserted} records in the overlap window)`,
        goal: '< 1 s',
        met: idle.durationMs < 1000,
      });
    } finally {
      await store.close();
      rmSync(file, { force: true });
    }
  } finally {
    await stopProcess(server);
  }
  return rows;
}
