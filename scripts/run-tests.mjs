#!/usr/bin/env node
// Runs every test file with Node's test runner under tsx, files in parallel. Each file runs
// its suite once per database dialect (SQLite and PostgreSQL). A file may take up to 10 minutes:
// the Chromium suites take about 5 on this 2-core machine when it is slow (both dialects, one
// after the other), and a file that hits its limit fails the run although it never hung.
// It builds first (incremental; nothing to do when dist/ is fresh): many suites spawn bin/wsops,
// which runs the compiled dist/ and refuses one older than src/.
import { spawnSync } from 'node:child_process';
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

const build = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const only = process.argv.slice(2);
// The server's suites, then each workspace package's own (packages/*/test).
const packageTests = existsSync('packages')
  ? readdirSync('packages').flatMap((p) => (existsSync(join('packages', p, 'test')) ? find(join('packages', p, 'test')) : []))
  : [];
const files = only.length ? only : [...find('test'), ...packageTests].sort();
const concurrency = process.env.WSOPS_TEST_CONCURRENCY ?? '3';
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-timeout=600000', ...files],
  {
    stdio: 'inherit',
    env: { ...process.env, WSOPS_CHROMIUM: await chromiumPath(), WSOPS_LOG_LEVEL: process.env.WSOPS_LOG_LEVEL ?? 'silent' },
  },
);
process.exit(result.status ?? 1);
