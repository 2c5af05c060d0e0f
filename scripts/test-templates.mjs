/**
 * Migrated template databases for one test run (scripts/run-tests.mjs). A test rig's fresh
 * database (test/helpers/databases.ts, `{ migrated: true }`) is then a copy of a template rather
 * than every migration run again: about 0.8 s of work per PostgreSQL database and 0.3 s per
 * SQLite one, paid by a couple of hundred rigs a run. Tests that need an empty database (the
 * migrations, `wsops copy`'s target, the CLI creating its database) still get one.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const POSTGRES_ADMIN_URL = process.env.WSOPS_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** `bin/wsops migrate` against `url`: the same migrations, in the same way, as a user's database. */
const migrate = (url) => run(process.execPath, ['bin/wsops', 'migrate'], { env: { ...process.env, WSOPS_DATABASE_URL: url } });

/** psql-free admin statements: pg is a dependency of the server already. */
async function admin(statement) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * Creates and migrates a template for each dialect of the run (WSOPS_TEST_DIALECTS, as
 * test/helpers/databases.ts reads it); resolves to the environment that names them for the test
 * processes, and a function that removes them.
 */
export async function migratedTemplates() {
  const dialects = (process.env.WSOPS_TEST_DIALECTS ?? 'sqlite,postgres').split(',');
  const env = {};
  const removals = [];
  const migrations = [];
  if (dialects.includes('sqlite')) {
    const dir = mkdtempSync(join(tmpdir(), 'wsops-template-'));
    env.WSOPS_TEST_SQLITE_TEMPLATE = join(dir, 'template.db');
    removals.push(async () => rmSync(dir, { recursive: true, force: true }));
    migrations.push(migrate(`sqlite:${env.WSOPS_TEST_SQLITE_TEMPLATE}`));
  }
  if (dialects.includes('postgres')) {
    const name = `wsops_test_template_${process.pid}_${Date.now().toString(36)}`;
    const url = new URL(POSTGRES_ADMIN_URL);
    url.pathname = `/${name}`;
    await admin(`CREATE DATABASE ${name}`);
    env.WSOPS_TEST_POSTGRES_TEMPLATE = name;
    removals.push(() => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    migrations.push(migrate(url.toString()));
  }
  const remove = () => Promise.all(removals.map((removal) => removal()));
  try {
    await Promise.all(migrations);
  } catch (error) {
    await remove();
    throw error;
  }
  return { env, remove };
}
