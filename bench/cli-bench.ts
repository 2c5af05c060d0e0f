/**
 * CLI start-up: the wall time of `wsops --help` and of `wsops key create --json` on SQLite,
 * each the median of several runs after one warm-up (the file cache, and Node's compile cache
 * on Node 22+). What an operator's script pays per call.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT } from './processes.js';
import type { Row } from './table.js';

const BIN = join(ROOT, 'bin/wsops');

/** CPU time of this process's finished children, in ms (Linux: /proc/self/stat cutime + cstime, 10 ms ticks). */
function childrenCpuMs(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** The command line before the build (ADR 21): bin/wsops imported src/cli/main.ts through tsx. */
const THROUGH_TSX = ['--import', 'tsx', join(ROOT, 'src/cli/main.ts')];

/** Median wall and CPU time of `runs` runs, after one that warms the caches. */
function timeRuns(args: string[], env: Record<string, string>, runs: number, entry: string[] = [BIN]): { wall: number; cpu: number } {
  const walls: number[] = [];
  const cpus: number[] = [];
  for (let i = 0; i <= runs; i++) {
    const cpuBefore = childrenCpuMs();
    const started = performance.now();
    const r = spawnSync(process.execPath, [...entry, ...args], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' });
    const ms = performance.now() - started;
    if (r.status !== 0) throw new Error(`wsops ${args.join(' ')} failed: ${r.stderr}`);
    if (i === 0) continue;
    walls.push(ms);
    cpus.push(childrenCpuMs() - cpuBefore);
  }
  return { wall: median(walls), cpu: median(cpus) };
}

const shown = (t: { wall: number; cpu: number }) => `${t.wall.toFixed(0)} ms (CPU ${t.cpu.toFixed(0)} ms)`;

export function cliBench(options: { dataDir: string; runs?: number }, log: (s: string) => void): Row[] {
  const runs = options.runs ?? 9;
  // bin/wsops refuses a dist/ older than src/: build first (a no-op when fresh).
  execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], { stdio: 'inherit' });
  const env = { WSOPS_DATABASE_URL: `sqlite:${join(options.dataDir, 'cli.db')}`, WSOPS_LOG_LEVEL: 'silent', WSOPS_DEMO: 'false' };
  const workspace = JSON.parse(
    execFileSync(process.execPath, [BIN, 'workspace', 'create', '--name', 'CLI bench', '--json'], {
      env: { ...process.env, ...env },
    }).toString(),
  ).id;
  log(`cli: ${runs} runs each`);
  const bare = median(
    Array.from({ length: runs }, () => {
      const started = performance.now();
      spawnSync(process.execPath, ['-e', '0']);
      return performance.now() - started;
    }),
  );
  const keyCreate = ['key', 'create', '--workspace', workspace, '--scopes', 'assets:read', '--json'];
  const help = timeRuns(['--help'], env, runs);
  const key = timeRuns(keyCreate, env, runs);
  const helpTsx = timeRuns(['--help'], env, 3, THROUGH_TSX);
  const keyTsx = timeRuns(keyCreate, env, 3, THROUGH_TSX);
  return [
    { benchmark: 'node -e 0 (for scale), wall', result: `${bare.toFixed(0)} ms`, goal: '', met: undefined },
    { benchmark: 'wsops --help through tsx (before ADR 21), wall', result: shown(helpTsx), goal: '', met: undefined },
    { benchmark: 'wsops key create --json through tsx, wall', result: shown(keyTsx), goal: '', met: undefined },
    { benchmark: 'wsops --help, wall', result: shown(help), goal: '<= 150 ms', met: help.wall <= 150 },
    { benchmark: 'wsops key create --json (SQLite), wall', result: shown(key), goal: '<= 400 ms', met: key.wall <= 400 },
  ];
}
