/** The read-only SQLite connection of the API's hot reads (HotQueries): list pages, details, keys. */
import SQLite from 'better-sqlite3';

/** A read-only connection to a SQLite file. */
export function openSqliteReader(path: string, mmapMb: number): SQLite.Database {
  const reader = new SQLite(path, { readonly: true });
  reader.exec('PRAGMA busy_timeout = 10000');
  reader.exec('PRAGMA cache_size = -32768');
  // Pages read through a mapping skip a read call and a copy each: a page of 100 records
  // touches about 25 pages at random depths (docs/benchmarks.md). Only read connections map:
  // writes go through the writer's ordinary I/O.
  if (mmapMb) reader.exec(`PRAGMA mmap_size = ${Math.floor(mmapMb) * 1024 * 1024}`);
  return reader;
}
