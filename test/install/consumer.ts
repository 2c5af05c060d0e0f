/**
 * A project outside the repository that installs the packed packages, as an integrator's would:
 * `npm install` of the two tarballs with no network. npm resolves a version range from the
 * registry's package list, which `npm ci` does not cache, so the project gets a lockfile made of
 * the repository's own (its production entries: the versions `npm ci` put in the npm cache,
 * which npm then takes from there), and npm adds the two tarballs and checks them against it.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const ROOT = new URL('../../', import.meta.url).pathname;

/** A Node.js to run the installed packages with, and better-sqlite3's addon built for it. */
export interface NodeBuild {
  version: string;
  node: string;
  sqliteAddon: string;
}

/** This machine's Node.js, then those scripts/node-versions.mjs prepared in .cache/node (22, 24 and 26 in CI). */
export function nodeBuilds(): NodeBuild[] {
  const here = {
    version: process.version,
    node: process.execPath,
    sqliteAddon: join(ROOT, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'),
  };
  const cache = join(ROOT, '.cache/node');
  const fetched = existsSync(cache)
    ? readdirSync(cache)
        .filter((v) => existsSync(join(cache, v, 'better_sqlite3.node')))
        .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
        .map((v) => ({ version: v, node: join(cache, v, 'package/bin/node'), sqliteAddon: join(cache, v, 'better_sqlite3.node') }))
    : [];
  return [here, ...fetched.filter((b) => b.version !== here.version)];
}

/** Whether the server package runs on `version` (bin/wsops refuses older ones outside a checkout). */
export function serverRunsOn(version: string): boolean {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 12);
}

/** Puts the better-sqlite3 addon built for one Node.js into the project (one addon fits one ABI). */
export function useAddon(dir: string, build: NodeBuild): void {
  const target = join(dir, 'node_modules/better-sqlite3/build/Release');
  mkdirSync(target, { recursive: true });
  // A new file, not the old one overwritten: a running server has the old one mapped.
  rmSync(join(target, 'better_sqlite3.node'), { force: true });
  copyFileSync(build.sqliteAddon, join(target, 'better_sqlite3.node'));
}

interface LockEntry {
  dev?: boolean;
  link?: boolean;
  version?: string;
  [key: string]: unknown;
}

/** `npm pack` of the server (the repository root) and of @wsops/client, into `dir`; returns the tarball paths. */
export async function packBoth(dir: string): Promise<{ server: string; client: string }> {
  // Built once here; each pack's own prepack build is then a no-op, and it writes the published
  // package.json (scripts/publish-manifest.mjs), which the tests check as users get it.
  await run(process.execPath, [join(ROOT, 'scripts/build.mjs')], { cwd: ROOT });
  const pack = async (cwd: string) => {
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd });
    return join(dir, (JSON.parse(stdout) as { filename: string }[])[0]!.filename);
  };
  // One after the other: the server's pack writes the published package.json in the repository
  // root for a moment (no `workspaces` in it), and npm, packing the client, reads that root to
  // find its workspace ("No workspaces found").
  const server = await pack(ROOT);
  const client = await pack(join(ROOT, 'packages/client'));
  return { server, client };
}

/**
 * A new project in a temporary folder depending on `dependencies` (name → spec), installed
 * offline with install scripts off (better-sqlite3's addon is copied in by `useAddon` rather than
 * compiled again: a minute or two of C). npm runs under `npmNode` (a supported Node.js, so its
 * engine checks are those a user's install makes); returns the folder and npm's output.
 */
export async function installProject(
  dependencies: Record<string, string>,
  options: { lockFromRepository: boolean; npmNode?: string },
): Promise<{ dir: string; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'wsops-consumer-'));
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module', dependencies }),
  );
  if (options.lockFromRepository) {
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
    const packages: Record<string, LockEntry> = { '': { name: 'consumer', version: '1.0.0', dependencies } };
    for (const [path, entry] of Object.entries(lock.packages)) {
      if (path === '' || entry.dev || entry.link || !path.startsWith('node_modules/')) continue;
      packages[path] = entry;
    }
    writeFileSync(
      join(dir, 'package-lock.json'),
      JSON.stringify({ name: 'consumer', version: '1.0.0', lockfileVersion: 3, requires: true, packages }),
    );
  }
  const npmCli = join((await run('npm', ['root', '-g'])).stdout.trim(), 'npm/bin/npm-cli.js');
  const { stdout, stderr } = await run(
    options.npmNode ?? process.execPath,
    [npmCli, 'install', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'],
    {
      cwd: dir,
    },
  );
  return { dir, output: stdout + stderr };
}
