/**
 * CLI start-up: what an operator's script pays per call. `wsops --help` and `wsops key create
 * --json` on SQLite, on this machine's Node.js and on each one scripts/node-versions.mjs prepared
 * in .cache/node (22, 24, 26): wall and CPU time (user + system), each the median of several
 * runs after one warm-up (the file cache, and Node's compile cache on Node 22+), the number of
 * JavaScript files the command loads (one more run, with bench/cli-modules.mjs), and the load
 * average when the series started, since this machine is shared and wall time follows the load.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { type NodeBuild, nodeBuilds, useAddon } from '../test/install/consumer.js';
import { ROOT } from './processes.js';
import type { Row } from './table.js';

const MODULE_HOOK = join(ROOT, 'bench/cli-modules.mjs');

/** CPU time of this process's finished children, in ms (Linux: /proc/self/stat cutime + cstime, 10 ms ticks). */
function childrenCpuMs(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

interface Timing {
  wall: number;
  cpu: number;
  /** The 1-minute load average when the series started. */
  load: number;
  /** JavaScript files loaded, when counted. */
  modules?: number;
}

/** Median wall and CPU time of `runs` runs of `node ...args`, after one that warms the caches. */
function timeRuns(node: string, args: string[], env: Record<string, string>, runs: number): Timing {
  const load = loadavg()[0] ?? 0;
  const walls: number[] = [];
  const cpus: number[] = [];
  for (let i = 0; i <= runs; i++) {
    const cpuBefore = childrenCpuMs();
    const started = performance.now();
    const r = spawnSync(node, args, { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' });
    const ms = performance.now() - started;
    if (r.status !== 0) throw new Error(`${node} ${args.join(' ')} failed: ${r.stderr}`);
    if (i === 0) continue;
    walls.push(ms);
    cpus.push(childrenCpuMs() - cpuBefore);
  }
  return { wall: median(walls), cpu: median(cpus), load };
}

/** The distinct JavaScript files one run of `node ...args` loads. */
function countModules(node: string, args: string[], env: Record<string, string>, dataDir: string): number {
  const list = join(dataDir, 'cli-modules.txt');
  rmSync(list, { force: true });
  const r = spawnSync(node, ['--import', MODULE_HOOK, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env, WSOPS_MODULE_LIST: list },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`${node} ${args.join(' ')} failed: ${r.stderr}`);
  return new Set(readFileSync(list, 'utf8').split('\n').filter(Boolean)).size;
}

/**
 * A checkout of this one for another Node.js: the same dist/ (copied with its times, so it is as
 * fresh as here), src/ and scripts/ linked, node_modules linked entry by entry except
 * better-sqlite3, whose addon must be the one built for that Node.js (one addon fits one ABI).
 */
function checkoutFor(build: NodeBuild, dataDir: string): string {
  const dir = join(dataDir, `cli-${build.version}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'bin'), { recursive: true });
  cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true, preserveTimestamps: true });
  cpSync(join(ROOT, 'bin/wsops'), join(dir, 'bin/wsops'));
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  for (const linked of ['src', 'scripts']) symlinkSync(join(ROOT, linked), join(dir, linked));
  const modules = realpathSync(join(ROOT, 'node_modules'));
  mkdirSync(join(dir, 'node_modules'));
  for (const name of readdirSync(modules)) {
    if (name !== 'better-sqlite3') symlinkSync(join(modules, name), join(dir, 'node_modules', name));
  }
  for (const part of ['lib', 'package.json']) {
    cpSync(join(modules, 'better-sqlite3', part), join(dir, 'node_modules/better-sqlite3', part), { recursive: true });
  }
  useAddon(dir, build);
  return dir;
}

const shown = (t: Timing) =>
  `${t.wall.toFixed(0)} ms (CPU ${t.cpu.toFixed(0)} ms${t.modules === undefined ? '' : `, ${t.modules} modules`}; load ${t.load.toFixed(1)})`;

export function cliBench(options: { dataDir: string; runs?: number }, log: (s: string) => void): Row[] {
  const runs = options.runs ?? 9;
  // bin/wsops refuses a dist/ older than src/: build first (a no-op when fresh).
  execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], { stdio: 'inherit' });
  const env = { WSOPS_DATABASE_URL: `sqlite:${join(options.dataDir, 'cli.db')}`, WSOPS_LOG_LEVEL: 'silent', WSOPS_DEMO: 'false' };
  const here = join(ROOT, 'bin/wsops');
  // Created and migrated by this machine's Node.js, so no run below pays for migrations.
  execFileSync(process.execPath, [here, 'migrate'], { env: { ...process.env, ...env } });
  log(`cli: ${runs} runs each`);
  const rows: Row[] = [];
  for (const build of nodeBuilds()) {
    const bin = build.node === process.execPath ? here : join(checkoutFor(build, options.dataDir), 'bin/wsops');
    // A workspace of its own: a workspace holds at most 20 keys.
    const workspace = JSON.parse(
      execFileSync(process.execPath, [here, 'workspace', 'create', '--name', `CLI bench ${build.version}`, '--json'], {
        env: { ...process.env, ...env },
      }).toString(),
    ).id;
    const keyCreate = [bin, 'key', 'create', '--workspace', workspace, '--scopes', 'assets:read', '--json'];
    const bare = timeRuns(build.node, ['-e', '0'], env, runs);
    const help = {
      ...timeRuns(build.node, [bin, '--help'], env, runs),
      modules: countModules(build.node, [bin, '--help'], env, options.dataDir),
    };
    const key = { ...timeRuns(build.node, keyCreate, env, runs), modules: countModules(build.node, keyCreate, env, options.dataDir) };
    const on = `Node ${build.version}`;
    rows.push(
      { benchmark: `node -e 0 (for scale), ${on}`, result: shown(bare), goal: '', met: undefined },
      { benchmark: `wsops --help, ${on}, wall`, result: shown(help), goal: '<= 150 ms', met: help.wall <= 150 },
      { benchmark: `wsops key create --json (SQLite), ${on}, wall`, result: shown(key), goal: '<= 400 ms', met: key.wall <= 400 },
    );
    log(`cli: ${on} done`);
  }
  return rows;
}
