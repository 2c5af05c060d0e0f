import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Dialect } from '../../src/store/database.js';

export const POSTGRES_ADMIN_URL = process.env.WSOPS_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Both dialects, unless narrowed with WSOPS_TEST_DIALECTS=sqlite (for quick local runs). */
export const DIALECTS: readonly Dialect[] = (process.env.WSOPS_TEST_DIALECTS ?? 'sqlite,postgres').split(',') as Dialect[];

export interface TestDatabase {
  url: string;
  /** Whether it holds wsops' schema already (a copy of the run's migrated template). */
  migrated: boolean;
  drop(): Promise<void>;
}

/**
 * The run's migrated templates, made once by scripts/run-tests.mjs (scripts/test-templates.mjs):
 * a SQLite file to copy, a PostgreSQL database to clone. Unset when a file runs outside it.
 */
const SQLITE_TEMPLATE = process.env.WSOPS_TEST_SQLITE_TEMPLATE;
const POSTGRES_TEMPLATE = process.env.WSOPS_TEST_POSTGRES_TEMPLATE;

/**
 * A fresh database of the dialect: a temporary file, or a new PostgreSQL database. Empty, or with
 * `migrated` a copy of the run's migrated template when there is one (the rigs' databases: the
 * server finds nothing to migrate, as on any start after the first).
 */
export async function createTestDatabase(dialect: Dialect, { migrated = false } = {}): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'wsops-test-'));
    const path = join(dir, 'test.db');
    const copied = migrated && SQLITE_TEMPLATE !== undefined;
    if (copied) copyFileSync(SQLITE_TEMPLATE, path);
    return { url: `sqlite:${path}`, migrated: copied, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `wsops_test_${randomBytes(6).toString('hex')}`;
  const cloned = migrated && POSTGRES_TEMPLATE !== undefined;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(cloned ? `CREATE DATABASE ${name} TEMPLATE ${POSTGRES_TEMPLATE}` : `CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    migrated: cloned,
    async drop() {
      const c = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
