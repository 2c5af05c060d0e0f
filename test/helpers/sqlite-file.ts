/**
 * A SQLite file opened as wsops opens it (its writer, reader and checkpoint thread), with one
 * table, and a second connection to the same file: what another process's connection is to it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from '#kysely';
import { type Database, openDatabase } from '../../src/store/database.js';

export interface SqliteFile {
  /** The database file's path (its WAL is `${file}-wal`). */
  file: string;
  database: Database;
  other: SQLite.Database;
  close(): Promise<void>;
}

/** `table` is the column list of a table `notes`, e.g. `text TEXT NOT NULL`. */
export async function openSqliteFile(prefix: string, table: string): Promise<SqliteFile> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const file = join(dir, 'wsops.db');
  const database = openDatabase(`sqlite:${file}`);
  await sql.raw(`CREATE TABLE notes (${table})`).execute(database.db);
  const other = new SQLite(file);
  return {
    file,
    database,
    other,
    async close() {
      other.close();
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
