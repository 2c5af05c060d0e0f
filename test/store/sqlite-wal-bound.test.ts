/**
 * SQLite's WAL file starts over while writes never pause. Under a steady stream of commits, with
 * other connections reading between them (an API process beside a worker), PASSIVE checkpoints
 * never let the WAL restart: it grew by every commit, to 5.4 GB in two minutes of actions. Once
 * the WAL holds 64 MB the checkpoint thread runs a RESTART checkpoint, and the file is cut back
 * to journal_size_limit (ADR 42, tenth pass).
 */
import assert from 'node:assert/strict';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type SQLite from 'better-sqlite3';
import { sql } from '#kysely';
import type { Database } from '../../src/store/database.js';
import { WAL_LIMIT_BYTES as LIMIT } from '../../src/store/dialects/sqlite-checkpoints.js';
import { openSqliteFile, type SqliteFile } from '../helpers/sqlite-file.js';

const MB = 1024 * 1024;
/** Written before the test gives up: a WAL that never starts over holds all of it. */
const BUDGET = 512 * MB;

/** The WAL header's checkpoint sequence number: SQLite adds one each time the WAL starts over. */
function walSequence(file: string): number {
  const fd = openSync(`${file}-wal`, 'r');
  try {
    const header = Buffer.alloc(16);
    readSync(fd, header, 0, 16, 0);
    return header.readUInt32BE(12);
  } finally {
    closeSync(fd);
  }
}

describe('the SQLite WAL file under writes that never pause [sqlite]', () => {
  let sqliteFile: SqliteFile;
  let file: string;
  let database: Database;
  /** Another connection to the same file: what another process's connection is to this one. */
  let other: SQLite.Database;
  before(async () => {
    sqliteFile = await openSqliteFile('wsops-wal-', 'body BLOB NOT NULL');
    ({ file, database, other } = sqliteFile);
  });
  after(() => sqliteFile?.close());

  it('starts over once it holds 64 MB, and is cut back to 64 MB, while commits keep coming and another connection keeps reading', async () => {
    const count = other.prepare('SELECT count(*) AS n FROM notes');
    const body = Buffer.alloc(64 * 1024, 7);
    const first = walSequence(file);
    let written = 0;
    let largest = 0;
    // One 64 KB commit a timer turn: the checkpoint thread, started by a timer once the WAL
    // passes 4 MB, gets turns as it would beside a server's requests.
    while (walSequence(file) === first && written < BUDGET) {
      await database.db.transaction().execute((trx) => sql`INSERT INTO notes VALUES (${body})`.execute(trx));
      count.get();
      written += body.length;
      largest = Math.max(largest, statSync(`${file}-wal`).size);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    assert.notEqual(walSequence(file), first, `the WAL started over (${written / MB} MB written, the WAL grew to ${largest / MB} MB)`);
    assert.ok(largest >= LIMIT, 'the WAL grew to the size that starts a RESTART checkpoint first');
    // The next commit writes from the WAL's start, and SQLite cuts the file back to the limit.
    await database.db.transaction().execute((trx) => sql`INSERT INTO notes VALUES (${body})`.execute(trx));
    assert.ok(statSync(`${file}-wal`).size <= LIMIT, `the WAL is ${statSync(`${file}-wal`).size / MB} MB after starting over`);
  });
});
