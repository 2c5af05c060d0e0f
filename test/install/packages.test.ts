/**
 * What users install, installed rather than imported: both packages packed with `npm pack`, the
 * tarballs installed offline into a project outside the repository, and then run there the way
 * an integrator and an operator would: the server's `wsops` (serve on SQLite with the demo,
 * --help, migrate on PostgreSQL), the client by ESM import, CommonJS require and TypeScript, a
 * signed delivery from the installed server's worker verified by the installed client, and
 * `wsops-mirror --once` into SQLite. On this machine's Node.js, and on each Node.js that
 * scripts/node-versions.mjs prepared (22, 24 and 26 in CI; `.ci/run` prepares them).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { createTestDatabase } from '../helpers/databases.js';
import { freePort, until } from '../helpers/processes.js';
import { installProject, type NodeBuild, nodeBuilds, packBoth, ROOT, serverRunsOn, useAddon } from './consumer.js';

const run = promisify(execFile);
const BUILDS = nodeBuilds();
const SERVER_BUILDS = BUILDS.filter((b) => serverRunsOn(b.version));
const env = (extra: Record<string, string>) => ({
  ...process.env,
  WSOPS_LOG_LEVEL: 'silent',
  WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true',
  ...extra,
});

/** Lists every page of a register, verifies one signed delivery, then exits (written into the project). */
const CLIENT_CHECK = `
import { createServer } from 'node:http';
import { WsopsClient, nodeWebhookHandler } from '@wsops/client';
const [baseUrl, apiKey] = process.argv.slice(2);
const client = new WsopsClient({ apiKey, baseUrl });
const ids = [];
for await (const asset of client.assets.list({ limit: 7 })) ids.push(asset.id);
const one = await client.assets.get(ids[0]);
// Deliveries wait here until the test has created the endpoint and passed its secret on stdin.
const secret = new Promise((resolve) => process.stdin.once('data', (d) => resolve(String(d).trim())));
let handler;
const server = createServer(async (req, res) => {
  handler ??= nodeWebhookHandler({
    secret: await secret,
    onEvent: (event) => {
      console.log(JSON.stringify({ verified: event.type }));
      setImmediate(() => process.exit(0));
    },
  });
  await handler(req, res);
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ ids: ids.length, unique: new Set(ids).size, got: one.id, port: server.address().port })));
`;

const TYPES_CHECK = `
import { WsopsClient, verifyWebhook, type RegisterTypes, type components } from '@wsops/client';
import { MIRROR_REGISTERS } from '@wsops/client/mirror';
import { isWsopsKey } from '@wsops/client/secretlint';
const client = new WsopsClient({ apiKey: 'svc_sk_test_x', baseUrl: 'http://127.0.0.1' });
export async function first(): Promise<components['schemas']['Asset'] | undefined> {
  for await (const asset of client.assets.list({ limit: 1 })) return asset;
  return undefined;
}
const person: RegisterTypes['people']['record'] | undefined = undefined;
export const used = [person, verifyWebhook, MIRROR_REGISTERS.length, isWsopsKey('svc_sk_test_x')];
// @ts-expect-error: a register the API does not have is a type error.
client.nosuch;
`;

/**
 * The consumer projects the client's declarations must compile in. Without @types/node: an
 * empty type root, and the browser's lib as a bundler project has, or ES2022 alone (a Node
 * project without DOM, where `Response` and `AbortSignal` are not declared: fetch-types.ts).
 * node10 (arethetypeswrong's `node10`): the subpaths resolve through `typesVersions`.
 */
const TYPE_CHECKS = {
  node16: { module: 'node16', moduleResolution: 'node16', types: 'node' },
  bundler: { module: 'esnext', moduleResolution: 'bundler', types: 'node' },
  'bundler without @types/node': { module: 'esnext', moduleResolution: 'bundler', types: 'dom' },
  'node16 with lib es2022 alone (no DOM, no @types/node)': { module: 'node16', moduleResolution: 'node16', types: 'none' },
  node10: { module: 'commonjs', moduleResolution: 'node10', types: 'node' },
} as const;
type TypeCheckName = keyof typeof TYPE_CHECKS;

interface Server {
  child: ChildProcess;
  output: () => string;
  baseUrl: string;
  databaseUrl: string;
  key: string;
  workspace: string;
}

/** `wsops serve` (`bin` run by `node`) on a new SQLite file in `dir`, with the demo; resolves once it prints the demo key. */
async function serve(bin: string, node: string, dir: string): Promise<Server> {
  const port = await freePort();
  const databaseUrl = `sqlite:${join(dir, `wsops-${port}.db`)}`;
  const child = spawn(node, [bin, 'serve', '--port', String(port)], {
    cwd: dir,
    env: env({ WSOPS_DATABASE_URL: databaseUrl, WSOPS_DEMO: 'true', WSOPS_LOG_LEVEL: 'warn', WSOPS_BASE_URL: `http://127.0.0.1:${port}` }),
  });
  let out = '';
  child.stdout?.on('data', (c) => (out += String(c)));
  child.stderr?.on('data', (c) => (out += String(c)));
  process.once('exit', () => child.kill('SIGKILL'));
  const demo = await until(
    () => {
      if (child.exitCode !== null) throw new Error(`wsops serve exited: ${out}`);
      const key = /Demo API key[^:]*: (\S+)/.exec(out)?.[1];
      const workspace = /Demo workspace (\S+)/.exec(out)?.[1];
      return key && workspace ? { key, workspace } : undefined;
    },
    120_000,
    'the server to print its demo key',
  ).catch((err: Error) => {
    child.kill('SIGKILL');
    throw new Error(`${err.message}; its output:\n${out.slice(-3000)}`);
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  // The demo is printed before the server listens.
  await until(() => fetch(`${baseUrl}/api/v1/scopes`).catch(() => undefined), 60_000, 'the server to listen');
  return { child, output: () => out, baseUrl, databaseUrl, ...demo };
}

/** Setup on the server's database (an endpoint): the checkout's CLI, whichever server runs. */
async function cli(server: Server, args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [join(ROOT, 'bin/wsops'), ...args], {
    env: env({ WSOPS_DATABASE_URL: server.databaseUrl }),
  });
  return stdout;
}

async function stop(server: Server | undefined): Promise<void> {
  if (!server || server.child.exitCode !== null) return;
  const exited = new Promise((r) => server.child.once('exit', r));
  server.child.kill('SIGTERM');
  await exited;
}

/** Every asset id by walking the pages with fetch: the count the client's auto-paging must match. */
async function assetCount(server: Server): Promise<number> {
  let count = 0;
  let cursor: string | null = null;
  do {
    const url: string = `${server.baseUrl}/api/v1/assets?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res: Response = await fetch(url, { headers: { authorization: `Bearer ${server.key}` } });
    assert.equal(res.status, 200);
    const page = (await res.json()) as { data: unknown[]; next_cursor: string | null };
    count += page.data.length;
    cursor = page.next_cursor;
  } while (cursor);
  return count;
}

describe('the packed packages, installed into a project outside the repository', () => {
  const packs = mkdtempSync(join(tmpdir(), 'wsops-packs-'));
  let project: string;
  let clientOnly: string;
  let installOutput: string;
  const typeChecks = new Map<string, Promise<string | undefined>>();
  // The server the client checks talk to: the installed one on a supported Node.js, else (no
  // Node.js 22+ prepared on this machine) the checkout's bin/wsops.
  let server: Server | undefined;

  before(async () => {
    const { server: serverTgz, client: clientTgz } = await packBoth(packs);
    const npmNode = SERVER_BUILDS.at(-1)?.node;
    const [full, bare] = await Promise.all([
      installProject(
        { wsops: `file:${serverTgz}`, '@wsops/client': `file:${clientTgz}`, 'better-sqlite3': '12.11.1' },
        { lockFromRepository: true, npmNode },
      ),
      installProject({ '@wsops/client': `file:${clientTgz}` }, { lockFromRepository: false, npmNode }),
    ]);
    project = full.dir;
    installOutput = full.output;
    clientOnly = bare.dir;
    writeFileSync(join(project, 'check-client.mjs'), CLIENT_CHECK);
    // tsc takes a while; the checks start now and are awaited by their tests.
    for (const name of Object.keys(TYPE_CHECKS) as TypeCheckName[]) typeChecks.set(name, typeCheck(project, name));
  });

  after(async () => {
    await stop(server);
    for (const dir of [packs, project, clientOnly]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the tarballs hold what runs and nothing from the tests', async () => {
    const list = async (tgz: string) => (await run('tar', ['tzf', tgz])).stdout.split('\n').filter(Boolean);
    const [serverFiles, clientFiles] = await Promise.all([
      list(join(packs, 'wsops-0.1.0.tgz')),
      list(join(packs, 'wsops-client-0.1.0.tgz')),
    ]);
    for (const f of [
      'package/bin/wsops',
      'package/dist/cli/main.js',
      'package/dist/read/pages.js',
      'package/dist/console/assets/console.css',
      'package/dist/cli/help.txt',
      // Browser files of dev-only packages (src/vendor-files.ts): the portal and the charts.
      'package/dist/vendor/scalar-standalone.js',
      'package/dist/vendor/uPlot.iife.min.js',
      'package/dist/vendor/uPlot.min.css',
    ])
      assert.ok(serverFiles.includes(f), `server tarball has ${f}`);
    for (const f of [
      'package/bin/wsops-mirror',
      'package/dist/index.js',
      'package/dist/index.d.ts',
      'package/dist/mirror/cli.js',
      'package/README.md',
    ])
      assert.ok(clientFiles.includes(f), `client tarball has ${f}`);
    for (const f of [...serverFiles, ...clientFiles])
      assert.doesNotMatch(f, /\/(test|src|scripts)\/|\.ts$(?<!\.d\.ts$)|tsbuildinfo|build-stamp/, f);
    for (const files of [serverFiles, clientFiles]) assert.ok(files.includes('package/LICENSE'), 'the MIT licence text is in the tarball');
    // The server's maps point at ../../src/*.ts and carry no sources: it ships none. The
    // client's carry their sources (inlineSources), so no map points outside its tarball.
    assert.deepEqual(
      serverFiles.filter((f) => f.endsWith('.map')),
      [],
      'the server tarball holds no source map',
    );
    const unpacked = mkdtempSync(join(tmpdir(), 'wsops-client-unpacked-'));
    try {
      await run('tar', ['xzf', join(packs, 'wsops-client-0.1.0.tgz'), '-C', unpacked]);
      for (const map of clientFiles.filter((f) => f.endsWith('.map'))) {
        const { sources, sourcesContent = [] } = JSON.parse(readFileSync(join(unpacked, map), 'utf8')) as {
          sources: string[];
          sourcesContent?: (string | null)[];
        };
        sources.forEach((source, i) => {
          const inside = clientFiles.includes(join(dirname(map), source));
          assert.ok(inside || typeof sourcesContent[i] === 'string', `${map}: ${source} is neither in the tarball nor in the map`);
        });
      }
    } finally {
      rmSync(unpacked, { recursive: true, force: true });
    }
  });

  it('the published package.json has no install-time or development scripts; the LICENSE is the MIT text', async () => {
    const read = async (tgz: string, file: string) => (await run('tar', ['xzf', join(packs, tgz), '-O', file])).stdout;
    for (const tgz of ['wsops-0.1.0.tgz', 'wsops-client-0.1.0.tgz']) {
      const manifest = JSON.parse(await read(tgz, 'package/package.json')) as Record<string, unknown>;
      const scripts = Object.keys((manifest.scripts ?? {}) as Record<string, string>);
      // npm asks users to approve these, and the development ones name files the tarball lacks.
      for (const installTime of ['preinstall', 'install', 'postinstall', 'prepare', 'prestart'])
        assert.ok(!scripts.includes(installTime), `${tgz}: no ${installTime} script`);
      assert.deepEqual(scripts, tgz.startsWith('wsops-client') ? [] : ['start'], tgz);
      for (const field of ['devDependencies', 'workspaces', 'publishedScripts'])
        assert.equal(manifest[field], undefined, `${tgz}: ${field}`);
      assert.equal(manifest.license, 'MIT');
      assert.match(await read(tgz, 'package/LICENSE'), /^MIT License\n[\s\S]*Permission is hereby granted, free of charge/);
    }
    // The checkout's package.json is put back as it was after each pack.
    const here = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.ok(here.scripts.prepare && here.scripts.test, 'the development scripts are still in the checkout');
  });

  it('the tarball sizes: no source map bigger than its code warrants, the client under 100 kB', async () => {
    const sizes = async (tgz: string) =>
      new Map(
        (await run('tar', ['tvzf', join(packs, tgz)])).stdout
          .split('\n')
          .filter(Boolean)
          .map((line) => {
            const parts = line.trim().split(/\s+/);
            return [parts.at(-1) as string, Number(parts[2])] as const;
          }),
      );
    for (const tgz of ['wsops-0.1.0.tgz', 'wsops-client-0.1.0.tgz']) {
      const files = await sizes(tgz);
      for (const [file, size] of files) {
        if (!file.endsWith('.js.map')) continue;
        const code = files.get(file.slice(0, -'.map'.length)) ?? 0;
        // A map carries its source inline: a few times its code, never kilobytes for a few bytes.
        assert.ok(size < Math.max(4 * code, 8192), `${tgz}: ${file} is ${size} bytes for ${code} bytes of code`);
      }
    }
    const client = statSync(join(packs, 'wsops-client-0.1.0.tgz')).size;
    assert.ok(client < 100_000, `the client tarball is ${client} bytes`);
  });

  it("the deploying guide's non-interactive approval of better-sqlite3's install script leaves none unreviewed (npm 11)", async (t) => {
    const pending = () => run('npm', ['approve-scripts', '--allow-scripts-pending'], { cwd: project });
    const before = await pending().catch(() => undefined);
    if (!before) return t.skip('this npm has no approve-scripts (npm 11 added it)');
    assert.match(before.stdout + before.stderr, /better-sqlite3@/, 'the one install script of the server and its dependencies');
    const readme = readFileSync(join(ROOT, 'docs/guide/deploying.md'), 'utf8').replace(/\s+/g, ' ');
    assert.ok(
      readme.includes('`npm init -y && npm pkg set allowScripts.better-sqlite3=true --json`'),
      'the command docs/guide/deploying.md gives',
    );
    await run('npm', ['pkg', 'set', 'allowScripts.better-sqlite3=true', '--json'], { cwd: project });
    const after = await pending();
    assert.match(after.stdout + after.stderr, /No packages with unreviewed install scripts/);
  });

  it('npm publish --dry-run accepts both packages, with the files npm pack put in the tarballs', async () => {
    // What `npm publish` would upload, checked by npm itself (name, version, bin, files); the
    // build is fresh (packBoth ran it), so the packages' prepare scripts are skipped.
    for (const [cwd, tgz] of [
      [ROOT, 'wsops-0.1.0.tgz'],
      [join(ROOT, 'packages/client'), 'wsops-client-0.1.0.tgz'],
    ] as const) {
      const { stdout } = await run('npm', ['publish', '--dry-run', '--ignore-scripts', '--json'], { cwd });
      const published = Object.values(JSON.parse(stdout) as Record<string, { files: { path: string }[] }>)[0];
      assert.ok(published, stdout);
      const packed = (await run('tar', ['tzf', join(packs, tgz)])).stdout.split('\n').filter((f) => f && !f.endsWith('/'));
      assert.deepEqual(published.files.map((f) => `package/${f.path}`).sort(), packed.sort(), cwd);
    }
  });

  if (SERVER_BUILDS.length > 0) {
    it(`installing on Node.js ${SERVER_BUILDS.at(-1)?.version} prints no engine warning`, () => {
      assert.doesNotMatch(installOutput, /EBADENGINE|npm warn/i, installOutput);
    });
  }

  for (const build of SERVER_BUILDS) {
    it(`npm ci of the repository on Node.js ${build.version} prints no engine warning (dry run)`, async () => {
      const copy = mkdtempSync(join(tmpdir(), 'wsops-ci-'));
      try {
        for (const file of ['package.json', 'package-lock.json', 'packages/client/package.json']) {
          mkdirSync(dirname(join(copy, file)), { recursive: true });
          copyFileSync(join(ROOT, file), join(copy, file));
        }
        const npmCli = join((await run('npm', ['root', '-g'])).stdout.trim(), 'npm/bin/npm-cli.js');
        const ci = await run(build.node, [npmCli, 'ci', '--dry-run', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
          cwd: copy,
        });
        assert.doesNotMatch(ci.stdout + ci.stderr, /EBADENGINE|npm warn/i);
      } finally {
        rmSync(copy, { recursive: true, force: true });
      }
    });
  }

  for (const build of SERVER_BUILDS) {
    it(`server on Node.js ${build.version}: wsops --help, serve on SQLite with the demo answers /api/v1/scopes`, async () => {
      useAddon(project, build);
      const help = await run(build.node, [join(project, 'node_modules/.bin/wsops'), '--help'], { cwd: project });
      assert.match(help.stdout, /serve \[options\]/);
      await stop(server);
      server = await serve(join(project, 'node_modules/.bin/wsops'), build.node, project);
      const res = await fetch(`${server.baseUrl}/api/v1/scopes`, { headers: { authorization: `Bearer ${server.key}` } });
      assert.equal(res.status, 200, server.output());
      assert.ok(((await res.json()) as { scopes: string[] }).scopes.includes('assets:read'));
      // Served from dist/vendor: @scalar/api-reference is a devDependency, not installed here.
      const reference = await fetch(`${server.baseUrl}/developers/assets/scalar-standalone.js`);
      assert.equal(reference.status, 200);
      assert.ok((await reference.arrayBuffer()).byteLength > 1_000_000);
    });
  }

  if (SERVER_BUILDS.length > 0) {
    it('npm start inside the installed package runs its wsops serve', async () => {
      const build = SERVER_BUILDS.at(-1) as NodeBuild;
      useAddon(project, build);
      const path = `${join(build.node, '..')}:${process.env.PATH}`;
      const started = await run('npm', ['start', '--', '--help'], { cwd: join(project, 'node_modules/wsops'), env: env({ PATH: path }) });
      assert.match(started.stdout, /Usage: wsops serve/);
    });

    it('npx wsops --help and npx wsops migrate against PostgreSQL', async () => {
      const build = SERVER_BUILDS.at(-1) as NodeBuild;
      const path = `${join(build.node, '..')}:${process.env.PATH}`;
      const help = await run('npx', ['--offline', 'wsops', '--help'], { cwd: project, env: env({ PATH: path }) });
      assert.match(help.stdout, /migrate/);
      const db = await createTestDatabase('postgres');
      try {
        const migrated = await run('npx', ['--offline', 'wsops', 'migrate', '--json'], {
          cwd: project,
          env: env({ PATH: path, WSOPS_DATABASE_URL: db.url }),
        });
        assert.ok((JSON.parse(migrated.stdout) as { applied: string[] }).applied.includes('0001_core'));
        const again = await run('npx', ['--offline', 'wsops', 'migrate', '--json'], {
          cwd: project,
          env: env({ PATH: path, WSOPS_DATABASE_URL: db.url }),
        });
        assert.deepEqual(JSON.parse(again.stdout), { applied: [] });
      } finally {
        await db.drop();
      }
    });
  }

  if (!serverRunsOn(process.version)) {
    it(`the installed server refuses Node.js ${process.version} in one line`, async () => {
      const refused = await run(process.execPath, [join(project, 'node_modules/.bin/wsops'), '--help'], { cwd: project }).catch((e) => e);
      assert.equal(refused.code, 2);
      assert.equal(refused.stdout, '');
      assert.match(refused.stderr, /^wsops: Node\.js v?[\d.]+ is not supported; wsops needs Node\.js 22\.12 or later[^\n]*\n$/);
    });
  }

  for (const build of BUILDS) {
    it(`client on Node.js ${build.version}: pages, a verified delivery, require(), wsops-mirror --help and --once`, async () => {
      if (!server) server = await ensureServer();
      useAddon(project, build);
      const expected = await assetCount(server);
      assert.ok(expected > 7, 'more than one page');
      const check = spawn(build.node, ['check-client.mjs', server.baseUrl, server.key], { cwd: project });
      try {
        let out = '';
        check.stdout.on('data', (c) => (out += String(c)));
        check.stderr.on('data', (c) => (out += String(c)));
        const first = await until(() => out.includes('\n') && JSON.parse(out.split('\n')[0] as string), 60_000, 'the client to list');
        assert.deepEqual({ ids: first.ids, unique: first.unique }, { ids: expected, unique: expected });
        const created = await cli(server, [
          'endpoint',
          'create',
          '--workspace',
          server.workspace,
          '--url',
          `http://127.0.0.1:${first.port}/hook`,
          '--scopes',
          'assets:read',
          '--events',
          'asset.assigned',
          '--json',
        ]);
        check.stdin.write(`${(JSON.parse(created) as { secret: string }).secret}\n`);
        await until(() => check.exitCode !== null, 60_000, `a verified delivery: ${out}`);
        assert.equal(check.exitCode, 0, out);
        assert.match(out, /"verified":"endpoint\.verification"/);
      } finally {
        check.kill();
      }

      const required = await run(
        build.node,
        ['-e', "const c = require('@wsops/client'); process.stdout.write(typeof c.WsopsClient + typeof c.verifyWebhook)"],
        {
          cwd: project,
        },
      );
      assert.equal(required.stdout, 'functionfunction');
      assert.doesNotMatch(required.stderr, /Error/);

      const mirror = join(project, 'node_modules/.bin/wsops-mirror');
      assert.match((await run(build.node, [mirror, '--help'], { cwd: project })).stdout, /^usage: wsops-mirror/);
      const file = join(project, `mirror-${build.version}.db`);
      const once = await run(build.node, [mirror, '--once', '--registers', 'assets', '--json'], {
        cwd: project,
        env: env({ WSOPS_API_KEY: server.key, WSOPS_BASE_URL: server.baseUrl, WSOPS_MIRROR_DATABASE_URL: `sqlite:${file}` }),
      });
      assert.equal((JSON.parse(once.stdout) as { upserted: number }).upserted, expected);
      const copy = new Database(file, { readonly: true });
      try {
        assert.equal((copy.prepare('SELECT count(*) AS n FROM assets').get() as { n: number }).n, expected);
      } finally {
        copy.close();
      }
    });
  }

  it('a mirror whose driver is not installed says which package to install, in one line', async () => {
    if (!server) server = await ensureServer();
    const mirror = join(clientOnly, 'node_modules/.bin/wsops-mirror');
    for (const [url, pkg] of [
      [`sqlite:${join(clientOnly, 'm.db')}`, 'better-sqlite3'],
      ['postgres://postgres@127.0.0.1:5432/postgres', 'pg'],
    ] as const) {
      const failed: { code: number; stderr: string } = await run(process.execPath, [mirror, '--once'], {
        cwd: clientOnly,
        env: env({ WSOPS_API_KEY: server.key, WSOPS_BASE_URL: server.baseUrl, WSOPS_MIRROR_DATABASE_URL: url }),
      }).catch((e) => e);
      assert.equal(failed.code, 2);
      assert.equal(failed.stderr.split('\n').filter(Boolean).length, 1, failed.stderr);
      assert.match(failed.stderr, new RegExp(`npm install ${pkg}\``));
    }
  });

  for (const name of Object.keys(TYPE_CHECKS)) {
    it(`TypeScript with moduleResolution ${name} resolves the types, register types and every entry point included`, async () => {
      assert.equal(await typeChecks.get(name), undefined);
    });
  }

  /** The installed server when a supported Node.js is prepared, else the checkout's (Node 20 here). */
  function ensureServer(): Promise<Server> {
    const build = SERVER_BUILDS.at(-1);
    if (!build) return serve(join(ROOT, 'bin/wsops'), process.execPath, project);
    useAddon(project, build);
    return serve(join(project, 'node_modules/.bin/wsops'), build.node, project);
  }
});

/** tsc on a consumer file importing the installed package; its complaints, or undefined. */
async function typeCheck(project: string, name: TypeCheckName): Promise<string | undefined> {
  const { module, moduleResolution, types: typeSource } = TYPE_CHECKS[name];
  const file = `types-${name.replace(/[^a-z0-9]+/g, '-')}.ts`;
  writeFileSync(join(project, file), TYPES_CHECK);
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  // skipLibCheck stays off, so the package's own declarations are checked.
  const noTypes = join(project, 'no-types');
  mkdirSync(noTypes, { recursive: true });
  const types =
    typeSource === 'node'
      ? ['--typeRoots', join(ROOT, 'node_modules/@types'), '--types', 'node']
      : ['--typeRoots', noTypes, '--lib', typeSource === 'dom' ? 'es2022,dom' : 'es2022'];
  const args = ['--noEmit', '--strict', '--module', module, '--moduleResolution', moduleResolution, '--target', 'es2022', ...types];
  try {
    await run(process.execPath, [tsc, ...args, file], { cwd: project });
    return undefined;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    return `${e.stdout ?? ''}${e.stderr ?? ''}` || e.message;
  }
}
