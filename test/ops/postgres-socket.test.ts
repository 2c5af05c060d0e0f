/**
 * A PostgreSQL on the same machine is reached over its Unix socket (docs/operations.md): a round
 * trip there costs less CPU than over TCP on loopback, on both sides, and a domain action makes
 * eight of them. `WSOPS_DATABASE_URL=postgres://USER@localhost/DB?host=/var/run/postgresql`:
 * the CLI and `wsops serve` work over it, and the server's sessions are socket sessions.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createTestDatabase, DIALECTS, POSTGRES_ADMIN_URL, type TestDatabase } from '../helpers/databases.js';
import { TEST_SECRET } from '../helpers/harness.js';
import { freePort, type Running, runWsops, startWsops, waitFor } from '../helpers/processes.js';

/** The server's socket directory, as it says itself; undefined when it has none this process can see. */
async function socketDirectory(): Promise<string | undefined> {
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ dirs: string; port: string }>(
      "SELECT current_setting('unix_socket_directories') AS dirs, current_setting('port') AS port",
    );
    const dir = rows[0]?.dirs.split(',')[0]?.trim();
    return dir && existsSync(join(dir, `.s.PGSQL.${rows[0]?.port}`)) ? dir : undefined;
  } finally {
    await admin.end();
  }
}

const dir = DIALECTS.includes('postgres') ? await socketDirectory() : undefined;

describe('PostgreSQL over its Unix socket', {
  skip: dir === undefined && 'PostgreSQL is not tested in this run, or has no socket here',
}, () => {
  let db: TestDatabase;
  /** The test database's name, and its URL over the socket. */
  let name: string;
  let url: string;
  let server: Running;
  before(async () => {
    db = await createTestDatabase('postgres');
    name = new URL(db.url).pathname.slice(1);
    url = `postgres://postgres@localhost/${name}?host=${encodeURIComponent(dir as string)}`;
  });
  after(async () => {
    await server?.stop();
    await db?.drop();
  });

  it('migrate, workspace and key commands, and `wsops serve` answering an API call, all over the socket', async () => {
    const env = { WSOPS_DATABASE_URL: url, WSOPS_SECRET: TEST_SECRET };
    await runWsops(['migrate'], env);
    const ws = JSON.parse(await runWsops(['workspace', 'create', '--name', 'Socket', '--json'], env)).id as string;
    const key = JSON.parse(await runWsops(['key', 'create', '--workspace', ws, '--scopes', 'people:read', '--json'], env)).key as string;
    const port = await freePort();
    server = startWsops(['serve', '--only', 'api'], { ...env, WSOPS_PORT: String(port) });
    await waitFor(`http://127.0.0.1:${port}/healthz`, server);
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/people`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual((await res.json()).data, []);

    // A session over a Unix socket has no client address.
    const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ tcp: string; socket: string }>(
        `SELECT count(*) FILTER (WHERE client_addr IS NOT NULL) AS tcp, count(*) FILTER (WHERE client_addr IS NULL) AS socket
         FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'wsops%'`,
        [name],
      );
      assert.equal(Number(rows[0]?.tcp), 0, 'no wsops session over TCP');
      assert.ok(Number(rows[0]?.socket) >= 1, 'the server holds sessions over the socket');
    } finally {
      await admin.end();
    }
  });
});
