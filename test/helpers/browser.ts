/**
 * End-to-end harness for the console: a REAL `wsops serve` process on a fresh database, the
 * operator CLI as a user would run it, and Chromium driven by playwright-core (the test runner
 * chooses which and passes it in WSOPS_CHROMIUM: scripts/chromium.mjs).
 * axe-core runs inside the page; screenshots are written only when WSOPS_SCREENSHOTS=1, so a
 * test run never rewrites the committed images.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import type { Dialect } from '../../src/store/database.js';
import { createTestDatabase } from './databases.js';
import { createHarness, type Harness, TEST_SECRET } from './harness.js';
import { freePort, until } from './processes.js';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const BIN = join(ROOT, 'bin/wsops');
export const CHROMIUM = process.env.WSOPS_CHROMIUM ?? '/usr/bin/chromium';
export const SCREENSHOTS_DIR = join(ROOT, 'docs/screenshots');

export { until };

export interface ConsoleServer {
  dialect: Dialect;
  /** http://127.0.0.1:PORT, also the server's WSOPS_BASE_URL (sign-in links point here). */
  baseUrl: string;
  databaseUrl: string;
  /** Runs `bin/wsops ARGS` against the server's database; returns stdout (parsed when `--json`). */
  cli(args: string[]): Promise<string>;
  // biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON output is read by each test
  cliJson(args: string[]): Promise<any>;
  stop(): Promise<void>;
}

/** Starts `wsops serve` (API, console and dispatcher in one process) on a fresh database of the dialect. */
export async function startConsoleServer(dialect: Dialect, extraEnv: Record<string, string> = {}): Promise<ConsoleServer> {
  const database = await createTestDatabase(dialect, { migrated: true });
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    WSOPS_DATABASE_URL: database.url,
    WSOPS_SECRET: TEST_SECRET,
    WSOPS_PORT: String(port),
    WSOPS_HOST: '127.0.0.1',
    WSOPS_BASE_URL: baseUrl,
    WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true',
    WSOPS_DEMO: 'false',
    WSOPS_LOG_LEVEL: process.env.WSOPS_E2E_LOG_LEVEL ?? 'error',
    ...extraEnv,
  };
  const cli = async (args: string[]) => {
    try {
      return (await run(process.execPath, [BIN, ...args], { env, cwd: ROOT, maxBuffer: 16 * 2 ** 20 })).stdout;
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(`wsops ${args.join(' ')} failed: ${e.stderr || e.message}`);
    }
  };
  // Migrated first (a copy of the run's template, or here), so the server and the CLI never race to create the schema.
  if (!database.migrated) await cli(['migrate']);
  const child: ChildProcess = spawn(process.execPath, [BIN, 'serve'], { env, cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  // A failed test must not leave the server running (it would keep the test process alive).
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  try {
    await until(
      async () => {
        if (exited) throw new Error(`wsops serve exited with ${child.exitCode}`);
        try {
          return (await fetch(`${baseUrl}/healthz`)).ok;
        } catch {
          return false;
        }
      },
      30_000,
      'wsops serve to listen',
    );
  } catch (err) {
    child.kill('SIGKILL');
    await database.drop();
    throw err;
  }
  return {
    dialect,
    baseUrl,
    databaseUrl: database.url,
    cli,
    async cliJson(args) {
      return JSON.parse(await cli([...args, '--json']));
    },
    async stop() {
      process.removeListener('exit', killOnExit);
      if (!exited) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await gone;
        clearTimeout(timer);
      }
      await database.drop();
    },
  };
}

export interface TestBrowser {
  browser: Browser;
  /** A fresh context (own cookies) with the clipboard permitted for the server's origin. */
  context(baseUrl: string): Promise<BrowserContext>;
  close(): Promise<void>;
}

/** One headless Chromium per test file (`extraArgs`: more command-line switches). */
export async function launchBrowser(extraArgs: string[] = []): Promise<TestBrowser> {
  // playwright-core gives every launch a new empty profile directory and removes it at close.
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  });
  return {
    browser,
    async context(baseUrl) {
      const context = await browser.newContext({ baseURL: baseUrl, viewport: DESKTOP });
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
      return context;
    },
    async close() {
      await browser.close();
    },
  };
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/**
 * Runs axe-core in the page; returns its serious and critical violations in words (rule, help,
 * the elements). Injected with evaluate: the console's CSP forbids inline scripts.
 */
export async function axeViolations(page: Page, label = page.url()): Promise<string[]> {
  const loaded = await page.evaluate(() => typeof (globalThis as { axe?: unknown }).axe !== 'undefined');
  if (!loaded) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(ctx: Document, opts: object): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })),
    }));
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${label}: [${v.impact}] ${v.id}: ${v.help}\n${v.nodes.map((n) => `      at ${n.target.join(' ')}: ${(n.failureSummary ?? '').split('\n')[0]}`).join('\n')}`,
    );
}

/** Fails on any serious or critical axe-core violation, listing each one. */
export async function axeCheck(page: Page, label = page.url()): Promise<void> {
  const bad = await axeViolations(page, label);
  if (bad.length) throw new Error(`axe-core found ${bad.length} serious/critical violation(s):\n${bad.join('\n')}`);
}

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** Saves docs/screenshots/NAME-desktop.png and NAME-phone.png, only when WSOPS_SCREENSHOTS=1. */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.WSOPS_SCREENSHOTS !== '1') return;
  mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  const before = page.viewportSize() ?? DESKTOP;
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: join(SCREENSHOTS_DIR, `${name}-desktop.png`) });
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: join(SCREENSHOTS_DIR, `${name}-phone.png`) });
  await page.setViewportSize(before);
}

/** axeCheck then screenshot: what every visited page gets. */
export async function checkPage(page: Page, name: string): Promise<void> {
  await axeCheck(page, name);
  await screenshot(page, name);
}

/**
 * Chromium for a console served at `localhost` (a passkey's site cannot be an IP address), with
 * localhost pinned to 127.0.0.1 so nothing else is ever contacted.
 */
export function launchBrowserForLocalhost(): Promise<TestBrowser> {
  return launchBrowser(['--host-resolver-rules=MAP localhost 127.0.0.1']);
}

/** An in-process console on 127.0.0.1 whose WSOPS_BASE_URL is http://localhost:PORT. */
export async function consoleAtLocalhost(dialect: Dialect): Promise<{ h: Harness; base: string }> {
  const port = await freePort();
  const base = `http://localhost:${port}`;
  const h = await createHarness(dialect, { WSOPS_BASE_URL: base });
  await h.app.listen({ port, host: '127.0.0.1' });
  return { h, base };
}
