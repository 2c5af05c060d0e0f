#!/usr/bin/env node
// Runs every test file under tsx in a few long-lived Node processes (three by default), each
// taking the next file from a queue as it finishes one (scripts/test-process.mjs). A process per
// file paid, for every file, Node's start, loading the server's modules through tsx's hooks, and
// running them before V8 had optimised any of it: about 2.7 s of CPU per file, measured in
// ADR 50. Each file runs its suite once per database dialect (SQLite and PostgreSQL). The largest
// files are handed out first (a file's size stands in for its run time), so no long file is
// left running alone at the end. A file that runs longer than its tier's limit (test-tiers.mjs:
// 90 s, or a few minutes for the named slow files) fails the run.
// It builds first (incremental; nothing to do when dist/ is fresh): many suites spawn bin/wsops,
// which runs the compiled dist/ and refuses one older than src/.
// With --checks (what `npm test` passes) it also runs `npm run lint` and `npm run typecheck`,
// beside the build and the tests rather than before them: the three run at once and the run
// fails if any fails. The checks' output is held and printed after the tests, each under its name.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { chromiumPath } from './chromium.mjs';
import { migratedTemplates } from './test-templates.mjs';
import { FILE_LIMIT_MS, SLOW_FILE_LIMIT_MS, SLOW_FILES } from './test-tiers.mjs';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'helpers' ? [] : find(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

/** A child's stdout and stderr, kept in arrival order to be printed whole when it ends. */
function collectOutput(child) {
  const output = [];
  child.stdout.on('data', (d) => output.push(d));
  child.stderr.on('data', (d) => output.push(d));
  return output;
}

/** `npm run <script>` in the background, its output collected; resolves to its exit code and output. */
function check(script) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const output = collectOutput(child);
    child.on('error', (error) => resolve({ script, code: 1, output: String(error), seconds: 0 }));
    child.on('close', (code) =>
      resolve({ script, code: code ?? 1, output: Buffer.concat(output).toString(), seconds: (Date.now() - started) / 1000 }),
    );
  });
}

/** User + system seconds of this process and its ended children (/proc/self/stat; Linux only). */
function cpuOfRun() {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) / 100;
  } catch {
    return undefined;
  }
}

const args = process.argv.slice(2);
/** Every file's time at the end, not only the ten slowest (`--times`). */
const allTimes = args.includes('--times');
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
  // CPU of this run: the runner, and every process it started, once they ended (the checks, the
  // test processes and what they started); PostgreSQL's own backends are not counted. Unlike the
  // wall time, it does not move with what else the machine is doing.
  const cpu = cpuOfRun();
  if (cpu !== undefined) process.stdout.write(`# CPU of the run: ${cpu.toFixed(0)} s (user + system)\n`);
  process.exit(code);
}

/** A node child with inherited output, awaited without blocking (the checks' pipes keep draining). */
const run = (args, env = process.env) =>
  new Promise((resolve) => spawn(process.execPath, args, { stdio: 'inherit', env }).on('close', (status) => resolve({ status })));

const build = await run(['scripts/build.mjs']);
if (build.status !== 0) await finish(build.status ?? 1);

const only = args.filter((a) => !a.startsWith('--'));
// The server's suites, then each workspace package's own (packages/*/test).
const packageTests = existsSync('packages')
  ? readdirSync('packages').flatMap((p) => (existsSync(join('packages', p, 'test')) ? find(join('packages', p, 'test')) : []))
  : [];
const fast = args.includes('--fast');
const files = (only.length ? only : [...find('test'), ...packageTests].sort()).filter((f) => !(fast && SLOW_FILES.has(f)));
const unknownSlow = [...SLOW_FILES.keys()].filter((f) => !existsSync(f));
if (unknownSlow.length) {
  process.stderr.write(`scripts/test-tiers.mjs names test files that do not exist: ${unknownSlow.join(' ')}\n`);
  await finish(2);
}
const concurrency = Number(process.env.WSOPS_TEST_CONCURRENCY ?? 3);
if (!Number.isInteger(concurrency) || concurrency < 1) {
  process.stderr.write(`WSOPS_TEST_CONCURRENCY must be a whole number of at least 1 (got ${process.env.WSOPS_TEST_CONCURRENCY})\n`);
  await finish(2);
}
// The rigs' databases are copies of one migrated template per dialect, made here once per run.
const templates = await migratedTemplates().catch(async (error) => {
  process.stderr.write(`could not make the migrated template databases: ${error.message}\n`);
  await finish(1);
});
const env = {
  ...process.env,
  ...templates.env,
  WSOPS_CHROMIUM: await chromiumPath(),
  WSOPS_LOG_LEVEL: process.env.WSOPS_LOG_LEVEL ?? 'silent',
};
/** Test processes started: at most one per file. */
const processes = Math.min(concurrency, files.length);
// The slow tier first, then the largest files.
const queue = files
  .map((file) => ({ file, slow: SLOW_FILES.has(file), bytes: statSync(file).size }))
  .sort((a, b) => Number(b.slow) - Number(a.slow) || b.bytes - a.bytes);
let handedOut = 0;
const problems = [];
/** Each finished file's wall time, for the slowest-files list printed at the end. */
const durations = [];
/** The spec reporter's "failing tests" section of each failed process, repeated at the end where a CI log's tail shows it. */
const failures = [];

/** The reporter's closing list of failed tests with their errors, cut to a length a log tail keeps. */
function failingTests(text) {
  const at = text.lastIndexOf('failing tests:');
  if (at < 0) return '';
  const lines = text.slice(at).split('\n');
  return lines.length > 80
    ? `${lines.slice(0, 80).join('\n')}\n… (${lines.length - 80} more lines above, in the process's output)`
    : lines.join('\n');
}

/**
 * One test process: answers its requests for files from the queue, and prints its reporter's
 * output whole when it ends (three processes' output interleaved line by line cannot be read).
 */
function testProcess(number) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--test-reporter=spec', 'scripts/test-process.mjs'], {
      // Each process takes its own slice of the ports tests start servers on (test/helpers/processes.ts).
      env: { ...env, WSOPS_TEST_PROCESS: String(number), WSOPS_TEST_PROCESSES: String(processes) },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const output = collectOutput(child);
    let current;
    const timer = setInterval(() => {
      if (current && Date.now() - current.started > current.limit) {
        problems.push(
          `${current.file} ran longer than its ${current.limit / 1000} s limit${current.limit === FILE_LIMIT_MS ? ' (a file that must take longer belongs in the slow tier, scripts/test-tiers.mjs)' : ''}`,
        );
        child.kill('SIGKILL');
      }
    }, 1000);
    child.on('message', ({ cpuSeconds }) => {
      if (current) durations.push({ file: current.file, seconds: (Date.now() - current.started) / 1000, cpu: cpuSeconds - current.cpu });
      const next = queue.shift();
      current = next && { file: next.file, started: Date.now(), cpu: cpuSeconds, limit: next.slow ? SLOW_FILE_LIMIT_MS : FILE_LIMIT_MS };
      if (next) process.stdout.write(`# ${++handedOut}/${files.length} ${next.file} (process ${number})\n`);
      child.send(next ? next.file : null);
    });
    child.on('close', (code, signal) => {
      clearInterval(timer);
      if (queue.length === 0 && current === undefined && code === 0 && signal === null) {
        process.stdout.write(`\n# process ${number}: ok\n`);
      } else {
        if (current) problems.push(`process ${number} ended (${signal ?? `exit ${code}`}) while running ${current.file}`);
        else problems.push(`process ${number} ended with ${signal ?? `exit ${code}`}: a test failed (marked ✖ in its output)`);
        process.stdout.write(`\n# process ${number}: FAILED (${signal ?? `exit ${code}`})\n`);
      }
      const text = Buffer.concat(output).toString();
      if (code !== 0) failures.push(failingTests(text));
      process.stdout.write(text);
      resolve();
    });
  });
}

await Promise.all(Array.from({ length: processes }, (_, i) => testProcess(i + 1)));
const slowest = durations.sort((a, b) => b.seconds - a.seconds).slice(0, allTimes ? durations.length : 10);
process.stdout.write(
  `\n# slowest files (wall; CPU of the test process and the processes it started; * the slow tier):\n${slowest
    .map(
      (d) =>
        `#   ${d.seconds.toFixed(1).padStart(6)} s  ${d.cpu.toFixed(1).padStart(6)} s CPU  ${d.file}${SLOW_FILES.has(d.file) ? ' *' : ''}`,
    )
    .join('\n')}\n`,
);
if (failures.some(Boolean)) process.stdout.write(`\n${failures.filter(Boolean).join('\n\n')}\n`);
// A process that died with files left in the queue leaves them to the others; none left means every file ran.
if (queue.length) problems.push(`${queue.length} files never ran: ${queue.map((q) => q.file).join(' ')}`);
process.stdout.write(
  `\n# ${files.length} files: ${problems.length ? `FAILED\n${problems.map((p) => `#   ${p}`).join('\n')}` : 'all passed'}\n`,
);
await templates.remove();
await finish(problems.length ? 1 : 0);
