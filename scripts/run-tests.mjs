#!/usr/bin/env node
// Runs every test file with Node's test runner under tsx, files in parallel. Each file runs
// its suite once per database dialect (SQLite and PostgreSQL). A file may take up to 10 minutes:
// the Chromium suites take about 5 on this 2-core machine when it is slow (both dialects, one
// after the other), and a file that hits its limit fails the run although it never hung.
// It builds first (incremental; nothing to do when dist/ is fresh): many suites spawn bin/wsops,
// which runs the compiled dist/ and refuses one older than src/.
// With --checks (what `npm test` passes) it also runs `npm run lint` and `npm run typecheck`,
// beside the build and the tests rather than before them: the three run at once and the run
// fails if any fails. The checks' output is held and printed after the tests, each under its name.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { chromiumPath } from './chromium.mjs';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'helpers' ? [] : find(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

/** `npm run <script>` in the background, its output collected; resolves to its exit code and output. */
function check(script) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout.on('data', (d) => output.push(d));
    child.stderr.on('data', (d) => output.push(d));
    child.on('error', (error) => resolve({ script, code: 1, output: String(error), seconds: 0 }));
    child.on('close', (code) =>
      resolve({ script, code: code ?? 1, output: Buffer.concat(output).toString(), seconds: (Date.now() - started) / 1000 }),
    );
  });
}

const args = process.argv.slice(2);
const checks = args.includes('--checks') ? [check('lint'), check('typecheck')] : [];

/** Prints the checks' outcome (after the tests' output) and exits with the first failure's code. */
async function finish(status) {
  let code = status;
  for (const { script, code: checkCode, output, seconds } of await Promise.all(checks)) {
    process.stdout.write(`\n# npm run ${script}: ${checkCode === 0 ? 'ok' : `FAILED (exit ${checkCode})`} in ${seconds.toFixed(0)} s\n`);
    if (checkCode !== 0) {
      process.stdout.write(output.endsWith('\n') ? output : `${output}\n`);
      if (code === 0) code = checkCode;
    }
  }
  process.exit(code);
}

/** A node child with inherited output, awaited without blocking (the checks' pipes keep draining). */
const run = (args, env = process.env) =>
  new Promise((resolve) => spawn(process.execPath, args, { stdio: 'inherit', env }).on('close', (status) => resolve({ status })));

const build = await run(['scripts/build.mjs']);
if (build.status !== 0) await finish(build.status ?? 1);

const only = args.filter((a) => a !== '--checks');
// The server's suites, then each workspace package's own (packages/*/test).
const packageTests = existsSync('packages')
  ? readdirSync('packages').flatMap((p) => (existsSync(join('packages', p, 'test')) ? find(join('packages', p, 'test')) : []))
  : [];
const files = only.length ? only : [...find('test'), ...packageTests].sort();
const chromium = await chromiumPath();
const concurrency = process.env.WSOPS_TEST_CONCURRENCY ?? '3';
const result = await run(['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-timeout=600000', ...files], {
  ...process.env,
  WSOPS_CHROMIUM: chromium,
  WSOPS_LOG_LEVEL: process.env.WSOPS_LOG_LEVEL ?? 'silent',
});
await finish(result.status ?? 1);
