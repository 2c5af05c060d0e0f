/**
 * Real `bin/wsops` processes for tests: a long-running `serve` with its output kept for
 * failure messages, one-shot CLI commands, free ports, and polling without fixed sleeps.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const ROOT = new URL('../../', import.meta.url).pathname;
export const BIN = join(ROOT, 'bin/wsops');
const run = promisify(execFile);

/** Waits until `condition` holds, polling; fails with `what` after `timeoutMs` (never a fixed sleep). */
export async function until<T>(condition: () => T | Promise<T>, timeoutMs: number, what: string, everyMs = 100): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * A port for a server a test starts (which binds it itself, a moment later). Chosen below
 * Linux's ephemeral range (32768–60999): a port handed out by `listen(0)` comes from that range,
 * and so does the local port of every outgoing connection (the suites open hundreds to
 * PostgreSQL in parallel), which could take the port between our check and the server's bind.
 * The test processes of one run (scripts/run-tests.mjs numbers them) each take their own slice of
 * 20000–32767, and a process hands its ports out in turn: two random picks in one range, checked
 * free by two processes before either server bound it, once started two servers on one port.
 */
const PORTS = { first: 20000, count: 12768 } as const;
const slices = Math.max(1, Number(process.env.WSOPS_TEST_PROCESSES ?? 1));
const slice = Math.min(slices - 1, Math.max(0, Number(process.env.WSOPS_TEST_PROCESS ?? 1) - 1));
const sliceSize = Math.floor(PORTS.count / slices);
let nextPort = Math.floor(Math.random() * sliceSize);

export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = PORTS.first + slice * sliceSize + (nextPort++ % sliceSize);
    const server = createServer();
    const free = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (free) {
      await new Promise((resolve) => server.close(resolve));
      return port;
    }
  }
  throw new Error(`no free port in slice ${slice + 1} of ${slices} of ${PORTS.first}-${PORTS.first + PORTS.count - 1}`);
}

export interface Running {
  child: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
}

/** Starts `bin/wsops ARGS` (no demo, info logs unless `env` says otherwise); stdout and stderr are kept. */
export function startWsops(args: string[], env: Record<string, string>): Running {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, WSOPS_LOG_LEVEL: 'info', WSOPS_DEMO: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (c) => {
    out += String(c);
  });
  child.stderr?.on('data', (c) => {
    out += String(c);
  });
  // A failed test must not leave the server running (it would keep the test process alive).
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  return {
    child,
    output: () => out,
    async stop() {
      process.removeListener('exit', killOnExit);
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Polls until the URL answers (the process is starting), then returns that answer. */
export async function waitFor(url: string, running: Running): Promise<Response> {
  for (let i = 0; i < 600; i++) {
    if (running.child.exitCode !== null) throw new Error(`process exited: ${running.output()}`);
    const res = await fetch(url).catch(() => undefined);
    if (res) return res;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never answered: ${running.output()}`);
}

/** Runs one CLI command to its end; returns its stdout, or throws with its stderr. */
export async function runWsops(args: string[], env: Record<string, string>): Promise<string> {
  try {
    return (await run(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, cwd: ROOT, maxBuffer: 16 * 2 ** 20 })).stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`wsops ${args.join(' ')} failed: ${e.stderr || e.message}`);
  }
}
