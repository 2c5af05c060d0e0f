/**
 * A/B of `/api/v1/scopes` between two built checkouts (issue 29: the key checksum and the IP
 * allowlist must add under 2%). Each checkout serves its own SQLite database; loads alternate
 * A, B, B with an allowlisted key, then again, so drift on a shared machine hits every variant.
 * Besides requests/s it reports the server's CPU time per request (from /proc), which a busy
 * shared machine disturbs far less than throughput.
 *   node --import tsx bench/scopes-ab.ts BASE_CHECKOUT [--rounds 6] [--duration 5] [--connections 10]
 * BASE_CHECKOUT is a built checkout of the version to compare with (npm run build in it).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuSeconds, freePort, type LoadResult, load, ROOT, startProcess, stopProcess } from './processes.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}
const base = process.argv[2];
if (!base) throw new Error('usage: bench/scopes-ab.ts BASE_CHECKOUT [--rounds N] [--duration S] [--connections C]');
const rounds = Number(arg('rounds', '6'));
const duration = Number(arg('duration', '5'));
const connections = Number(arg('connections', '10'));
const dir = mkdtempSync(join(tmpdir(), 'wsops-scopes-ab-'));

async function serve(checkout: string, name: string, allowIp?: string) {
  const env = {
    WSOPS_DATABASE_URL: `sqlite:${join(dir, `${name}.db`)}`,
    WSOPS_SECRET: 'bench-secret-bench-secret-bench-secret-01',
    WSOPS_DEMO: 'false',
    WSOPS_LOG_LEVEL: 'warn',
    WSOPS_RATE_LIMIT_PER_SECOND: '1000000',
    WSOPS_RATE_LIMIT_BURST: '1000000',
  };
  const cli = (...args: string[]) =>
    JSON.parse(
      execFileSync(process.execPath, [join(checkout, 'bin/wsops'), ...args, '--json'], { env: { ...process.env, ...env } }).toString(),
    );
  cli('migrate');
  const ws = cli('workspace', 'create', '--name', 'Bench', '--modules', 'all').id as string;
  const key = cli('key', 'create', '--workspace', ws, '--scopes', 'assets:read,people:read').key as string;
  const allowed = allowIp
    ? (cli('key', 'create', '--workspace', ws, '--scopes', 'assets:read,people:read', '--allow-ip', allowIp).key as string)
    : undefined;
  const port = await freePort();
  const child = await startProcess(
    ['--max-semi-space-size=32', '--min-semi-space-size=8', join(checkout, 'bin/wsops'), 'serve', '--only', 'api'],
    { ...env, WSOPS_PORT: String(port) },
    `http://127.0.0.1:${port}/healthz`,
  );
  return { child, url: `http://127.0.0.1:${port}`, key, allowed };
}

const a = await serve(base, 'a');
const b = await serve(ROOT, 'b', '127.0.0.0/8');
type Measured = LoadResult & { cpuMicros: number };
const run = async (server: { child: { pid?: number }; url: string }, key: string): Promise<Measured> => {
  const pid = server.child.pid as number;
  const cpu = cpuSeconds(pid);
  const r = await load(server.url, { authorization: `Bearer ${key}` }, ['/api/v1/scopes'], connections, duration);
  return { ...r, cpuMicros: ((cpuSeconds(pid) - cpu) * 1e6) / Math.max(1, r.total) };
};
const results: Record<'base' | 'checksum' | 'checksum+allowlist', Measured[]> = { base: [], checksum: [], 'checksum+allowlist': [] };
try {
  await run(a, a.key); // warm both
  await run(b, b.key);
  for (let i = 0; i < rounds; i++) {
    results.base.push(await run(a, a.key));
    results.checksum.push(await run(b, b.key));
    results['checksum+allowlist'].push(await run(b, b.allowed as string));
  }
} finally {
  await stopProcess(a.child);
  await stopProcess(b.child);
  rmSync(dir, { recursive: true, force: true });
}
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] as number;
const baseRps = median(results.base.map((r) => r.rps));
const baseCpu = median(results.base.map((r) => r.cpuMicros));
for (const [name, rs] of Object.entries(results)) {
  const rps = median(rs.map((r) => r.rps));
  const cpu = median(rs.map((r) => r.cpuMicros));
  const errors = rs.reduce((n, r) => n + r.errors + r.non2xx, 0);
  process.stdout.write(
    `${name.padEnd(20)} CPU ${cpu.toFixed(1)} µs/request (${((cpu / baseCpu - 1) * 100).toFixed(1)}%; runs ${rs.map((r) => r.cpuMicros.toFixed(1)).join(' ')}), ` +
      `${rps.toFixed(0)} req/s (${((rps / baseRps - 1) * 100).toFixed(1)}%; runs ${rs.map((r) => r.rps.toFixed(0)).join(' ')}), errors ${errors}\n`,
  );
}
