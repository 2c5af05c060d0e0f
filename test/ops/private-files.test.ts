/**
 * Files that hold every workspace's data are readable by their owner only, whatever the umask:
 * the SQLite database with its `-wal` and `-shm`, the folder wsops makes for it, a `wsops copy
 * --to sqlite:` target and a `wsops export --output` file. Run under the usual umask 022, which
 * would leave them world-readable.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from '#kysely';
import { openDatabase } from '../../src/store/database.js';
import { migrate } from '../../src/store/migrate.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness, TEST_SECRET } from '../helpers/harness.js';
import { BIN } from '../helpers/processes.js';

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

/** `bin/wsops ARGS` started by a shell whose umask is 022, as on most machines. */
function wsopsUnderUmask022(args: readonly string[], env: Record<string, string>) {
  const r = spawnSync('sh', ['-c', 'umask 022 && exec "$0" "$@"', process.execPath, BIN, ...args], {
    env: { ...process.env, WSOPS_SECRET: TEST_SECRET, WSOPS_LOG_LEVEL: 'silent', ...env },
    encoding: 'utf8',
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'wsops-modes-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('the SQLite database is created readable by its owner only', () => {
  it('under umask 022, the folder wsops makes is 0700 and the database, its -wal and -shm are 0600', async () => {
    const previous = process.umask(0o022);
    const file = join(dir, 'made', 'by', 'wsops', 'wsops.db');
    const database = openDatabase(`sqlite:${file}`);
    try {
      await migrate(database);
      await sql`INSERT INTO settings (name, value) VALUES ('probe', 'x')`.execute(database.db);
      // While the database is open its WAL and shared memory exist: SQLite made them.
      assert.ok(existsSync(`${file}-wal`) && existsSync(`${file}-shm`), 'the database runs in WAL mode');
      assert.deepEqual(
        {
          db: mode(file),
          wal: mode(`${file}-wal`),
          shm: mode(`${file}-shm`),
          folder: mode(join(dir, 'made', 'by', 'wsops')),
          parent: mode(join(dir, 'made')),
        },
        { db: '600', wal: '600', shm: '600', folder: '700', parent: '700' },
      );
    } finally {
      await database.close();
      process.umask(previous);
    }
  });

  it('`wsops migrate` under umask 022 creates the default-style database 0600 in a 0700 folder', () => {
    const file = join(dir, 'cli', 'data', 'wsops.db');
    const r = wsopsUnderUmask022(['migrate'], { WSOPS_DATABASE_URL: `sqlite:${file}` });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(mode(file), '600');
    assert.equal(mode(join(dir, 'cli', 'data')), '700');
  });
});

describe('copies and exports are readable by their owner only', () => {
  for (const dialect of DIALECTS) {
    describe(`[${dialect}]`, () => {
      let h: Harness;
      let ws: string;
      before(async () => {
        h = await createHarness(dialect);
        ws = await h.workspace({ seed: true });
      });
      after(() => h.close());

      it('`wsops copy --to sqlite:` under umask 022 makes the target 0600 in a 0700 folder', () => {
        const target = join(dir, `copy-${dialect}`, 'into', 'target.db');
        const r = wsopsUnderUmask022(['copy', '--to', `sqlite:${target}`], { WSOPS_DATABASE_URL: h.databaseUrl });
        assert.equal(r.status, 0, r.stderr);
        assert.equal(mode(target), '600');
        assert.equal(mode(join(dir, `copy-${dialect}`, 'into')), '700');
      });

      it('`wsops export --output` under umask 022 writes the file 0600', () => {
        const output = join(dir, `export-${dialect}.ndjson`);
        const r = wsopsUnderUmask022(['export', '--workspace', ws, '--output', output], { WSOPS_DATABASE_URL: h.databaseUrl });
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stdout, /^exported \d+ records/);
        assert.equal(mode(output), '600');
      });
    });
  }
});
