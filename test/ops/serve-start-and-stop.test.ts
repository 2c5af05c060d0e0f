/**
 * A start that fails cleanly and a stop that stops: `wsops serve` with its port taken refuses in
 * one line naming the port and the setting that changes it, before the database is migrated,
 * the demo written or its key printed; and a signal to the command a user typed (`npm start`,
 * `npx wsops serve`) stops the server it started and frees the port.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { openDatabase } from '../../src/store/database.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.js';
import { TEST_SECRET } from '../helpers/harness.js';
import { BIN, freePort, ROOT, until } from '../helpers/processes.js';

/** Holds `port` on 127.0.0.1, as another program would. */
async function occupy(port: number): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return server;
}

/** Does anything accept connections on the port? */
async function answers(port: number): Promise<boolean> {
  const res = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
  return res !== undefined;
}

/** The processes left in a process group (empty once every one has exited). */
function inGroup(pgid: number): string[] {
  const r = spawnSync('ps', ['-o', 'pid=,args=', '-g', String(pgid)], { encoding: 'utf8' });
  return r.stdout
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

async function tableCount(url: string): Promise<number> {
  const database = openDatabase(url);
  try {
    return (await database.db.introspection.getTables()).length;
  } finally {
    await database.close();
  }
}

for (const dialect of DIALECTS) {
  describe(`a start that fails cleanly [${dialect}]`, () => {
    let db: TestDatabase;
    before(async () => {
      db = await createTestDatabase(dialect);
    });
    after(() => db.drop());

    for (const which of ['WSOPS_PORT', 'WSOPS_INTERNAL_PORT'] as const) {
      it(`with the port of ${which} taken: one line naming the port and ${which}, exit 2, no demo printed, nothing written`, async () => {
        const taken = await freePort();
        let other = await freePort();
        while (other === taken) other = await freePort();
        const holder = await occupy(taken);
        try {
          const r = spawnSync(process.execPath, [BIN, 'serve'], {
            env: {
              ...process.env,
              WSOPS_DATABASE_URL: db.url,
              WSOPS_SECRET: TEST_SECRET,
              WSOPS_DEMO: 'true',
              WSOPS_LOG_LEVEL: 'info',
              WSOPS_PORT: String(which === 'WSOPS_PORT' ? taken : other),
              WSOPS_INTERNAL_PORT: String(which === 'WSOPS_PORT' ? other : taken),
            },
            encoding: 'utf8',
            timeout: 60_000,
          });
          assert.equal(r.status, 2, r.stderr);
          assert.equal(r.stdout, '', 'nothing on stdout: no demo key, no log');
          assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
          assert.match(
            r.stderr,
            new RegExp(`^wsops: port ${taken} on 127\\.0\\.0\\.1 is already in use.*choose a free port with ${which}\\n$`),
          );
          assert.doesNotMatch(r.stderr, /Demo API key|\n\s+at /);
          assert.equal(await tableCount(db.url), 0, 'the database was not even migrated');
          assert.ok(!(await answers(other)), 'the other listener was not left running');
        } finally {
          holder.close();
        }
      });
    }

    it('`wsops serve --port N` with N taken names --port', async () => {
      const taken = await freePort();
      const holder = await occupy(taken);
      try {
        const r = spawnSync(process.execPath, [BIN, 'serve', '--port', String(taken)], {
          env: { ...process.env, WSOPS_DATABASE_URL: db.url, WSOPS_SECRET: TEST_SECRET, WSOPS_DEMO: 'false' },
          encoding: 'utf8',
          timeout: 60_000,
        });
        assert.equal(r.status, 2, r.stderr);
        assert.match(r.stderr, new RegExp(`^wsops: port ${taken} .* with --port\\n$`));
      } finally {
        holder.close();
      }
    });
  });

  describe(`a signal to the command the user typed stops the server [${dialect}]`, () => {
    let db: TestDatabase;
    before(async () => {
      db = await createTestDatabase(dialect);
      // Migrated once, so each start below is quick.
      execFileSync(process.execPath, [BIN, 'migrate'], { env: { ...process.env, WSOPS_DATABASE_URL: db.url, WSOPS_SECRET: TEST_SECRET } });
    });
    after(() => db.drop());

    // `to` says who gets the signal: `kill PID` (the command alone), or Ctrl-C in a terminal,
    // which signals every process of the foreground group.
    for (const [command, args, signal, to] of [
      ['npm start', ['start'], 'SIGTERM', 'command'],
      ['npm start', ['start'], 'SIGINT', 'command'],
      ['npm start', ['start'], 'SIGINT', 'group'],
      ['npx wsops serve', ['exec', '--', 'wsops', 'serve'], 'SIGTERM', 'command'],
      ['npx wsops serve', ['exec', '--', 'wsops', 'serve'], 'SIGINT', 'group'],
    ] as const) {
      it(`${signal} to \`${command}\` (${to === 'group' ? 'Ctrl-C: its process group' : 'the command alone'}) stops the server: the port is free and no process it started is left`, async () => {
        const port = await freePort();
        // Its own process group, so that what it started can be found (and cleaned up) by group.
        const npm = spawn('npm', [...args], {
          cwd: ROOT,
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, WSOPS_DATABASE_URL: db.url, WSOPS_SECRET: TEST_SECRET, WSOPS_DEMO: 'false', WSOPS_PORT: String(port) },
        });
        let output = '';
        npm.stdout.on('data', (c) => {
          output += String(c);
        });
        npm.stderr.on('data', (c) => {
          output += String(c);
        });
        const pgid = npm.pid as number;
        try {
          await until(() => answers(port), 120_000, `${command} listening on ${port}: ${output}`);
          assert.ok(
            inGroup(pgid).some((p) => p.includes('wsops serve')),
            'the server runs under the command',
          );
          process.kill(to === 'group' ? -pgid : pgid, signal);
          await until(async () => !(await answers(port)), 30_000, `port ${port} freed after ${signal}`);
          await until(() => inGroup(pgid).length === 0, 30_000, `every process of ${command} gone: ${inGroup(pgid).join('; ')}`);
        } finally {
          try {
            process.kill(-pgid, 'SIGKILL');
          } catch {
            // Already gone: what the test wants.
          }
        }
      });
    }
  });
}
