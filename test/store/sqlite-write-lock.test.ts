/**
 * SQLite has one write lock per database file. A write transaction waits for a lock another
 * process holds (an API process beside a worker) on a timer, not inside SQLite's busy handler,
 * which sleeps on the main thread: the process keeps serving meanwhile, and begins as soon as the
 * lock is free (ADR 42, sixth pass).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type SQLite from 'better-sqlite3';
import { sql } from '#kysely';
import type { Database } from '../../src/store/database.js';
import { openSqliteFile, type SqliteFile } from '../helpers/sqlite-file.js';

describe('waiting for SQLite’s write lock [sqlite]', () => {
  let sqliteFile: SqliteFile;
  let database: Database;
  /** Another connection to the same file: what another process's connection is to this one. */
  let other: SQLite.Database;
  before(async () => {
    sqliteFile = await openSqliteFile('wsops-write-lock-', 'text TEXT NOT NULL');
    ({ database, other } = sqliteFile);
  });
  after(() => sqliteFile?.close());

  it('a transaction waiting for the lock another connection holds leaves the process running, and commits once the lock is released', async () => {
    other.exec('BEGIN IMMEDIATE');
    other.exec("INSERT INTO notes VALUES ('the other connection')");
    let settled = false;
    const waiting = database.db
      .transaction()
      .execute((trx) => sql`INSERT INTO notes VALUES ('this process')`.execute(trx))
      .finally(() => {
        settled = true;
      });
    // SQLite's busy handler would hold this thread until its timeout, and the transaction would
    // fail with SQLITE_BUSY before this line ran: the other connection lives on this thread too.
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, false, 'the transaction waits while the other connection holds the lock');
    other.exec('COMMIT');
    await waiting;
    const rows = await sql<{ text: string }>`SELECT text FROM notes ORDER BY rowid`.execute(database.db);
    assert.deepEqual(
      rows.rows.map((r) => r.text),
      ['the other connection', 'this process'],
    );
  });
});
