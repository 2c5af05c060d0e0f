import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ROOT = new URL('..', import.meta.url).pathname;

/**
 * Starts a server process and resolves once its port answers. Its log (stdout) is dropped, or
 * appended to the file WSOPS_BENCH_SERVER_LOG names: what to keep when a run fails for a reason
 * the bench cannot see.
 */
export async function startProcess(args: string[], env: Record<string, string>, readyUrl: string): Promise<ChildProcess> {
  const logTo = process.env.WSOPS_BENCH_SERVER_LOG;
  const stdout = logTo ? openSync(logTo, 'a') : 'ignore';
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', stdout, 'inherit'] });
  if (typeof stdout === 'number') closeSync(stdout); // the child has its own copy
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${child.exitCode}`);
    try {
      await fetch(readyUrl);
      return child;
    } catch {
      if (Date.now() > deadline) throw new Error(`${args.join(' ')} did not start`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

export interface RssPeak {
  /** The process's own memory (RssAnon + RssShmem): heap, stacks, SQLite's page cache. */
  privateMb: number;
  /** Everything resident, file pages of a mapped database included (VmRSS, what `top` calls RES). */
  totalMb: number;
}

/**
 * Samples a process's resident memory until stopped; returns the peaks in MB. Private and total
 * are told apart because a mapped SQLite file (WSOPS_SQLITE_MMAP_MB) shows in VmRSS as the
 * kernel's file cache, which is shared and reclaimable, not memory the process holds.
 */
export function sampleRss(pid: number): () => RssPeak {
  const peak: RssPeak = { privateMb: 0, totalMb: 0 };
  const kb = (status: string, field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  const timer = setInterval(() => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      peak.privateMb = Math.max(peak.privateMb, (kb(status, 'RssAnon') + kb(status, 'RssShmem')) / 1024);
      peak.totalMb = Math.max(peak.totalMb, kb(status, 'VmRSS') / 1024);
    } catch {
      /* process gone */
    }
  }, 100);
  return () => {
    clearInterval(timer);
    return peak;
  };
}

/** Clock ticks per second of /proc's CPU times (USER_HZ), read once. */
let ticksPerSecondRead: number | undefined;
const ticksPerSecond = (): number =>
  (ticksPerSecondRead ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100);

/**
 * CPU seconds a process has used so far, all its threads, user and system (/proc/PID/stat).
 * The walk benchmarks report the server's share: on 2 cores the client's work competes with it.
 */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which may hold spaces: utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond();
}

/**
 * CPU seconds the whole machine has spent so far, all cores (/proc/stat's first line): `busy` is
 * every field but idle, iowait and steal; `steal` the time the hypervisor gave this machine's
 * cores to others while they had work. Two readings around a phase say how much of the machine the
 * phase left to anyone else, and whether the machine itself ran slow.
 */
export function machineCpu(): { busy: number; steal: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  // user nice system idle iowait irq softirq steal (guest time is already inside user).
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = line.trim().split(/\s+/).slice(1).map(Number);
  const ticks = ticksPerSecond();
  return { busy: (user + nice + system + irq + softirq) / ticks, steal: steal / ticks };
}

/**
 * CPU seconds of each PostgreSQL backend serving `database` (its title names the database), by
 * pid: two of these around a phase give the backends' share of it (`backendsCpuBetween`).
 */
export function backendsCpu(database: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.startsWith('postgres: ') && cmdline.includes(` ${database} `)) out.set(Number(entry), cpuSeconds(Number(entry)));
    } catch {
      // The process ended meanwhile.
    }
  }
  return out;
}

/** CPU seconds the backends used between two `backendsCpu` readings (one born meanwhile counts whole). */
export function backendsCpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, s] of after) sum += s - (before.get(pid) ?? 0);
  return sum;
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  /** Only from `loadRequests`. */
  p95?: number;
  errors: number;
  non2xx: number;
  total: number;
}

/** Runs autocannon in its own process against a list of paths. */
export async function load(
  url: string,
  headers: Record<string, string>,
  paths: string[],
  connections: number,
  duration: number,
  overallRate?: number,
  amount?: number,
): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'wsops-load-'));
  const specFile = join(dir, 'spec.json');
  writeFileSync(specFile, JSON.stringify({ url, headers, paths, connections, duration, overallRate, amount }));
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/load.ts', specFile], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout?.on('data', (c) => {
    out += String(c);
  });
  await new Promise((r) => child.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
  return JSON.parse(out.trim().split('\n').at(-1) as string) as LoadResult;
}

/** `amount` requests over `connections` (however long they take), with p95 besides p50 and p99. */
export function loadRequests(
  url: string,
  headers: Record<string, string>,
  paths: string[],
  connections: number,
  amount: number,
): Promise<LoadResult> {
  return load(url, headers, paths, connections, 0, undefined, amount);
}

/** A port the system says is free now (bound to 0, then released): no collision with a busy one. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
