/** Chooses the dialect once, from the database URL: `sqlite:PATH` or `postgres://...`. */
import type { Logger } from '../../logger.js';
import { sqliteFileOf } from '../../redact-url.js';
import { StorageHealth, watchedWrite } from '../storage-faults.js';
import type { Adapter, Database, Dialect, OpenOptions } from './engine.js';
import { openPostgres, postgresAdapter } from './postgres.js';
import { openSqlite, sqliteAdapter } from './sqlite.js';

/** `logger` hears what happens to PostgreSQL sessions (none: nothing is said; pino is not loaded). */
export function openDatabase(url: string, logger?: Logger, options: OpenOptions = {}): Database {
  const file = sqliteFileOf(url);
  const database = file === undefined ? openPostgres(url, logger) : openSqlite(file, options);
  // Record writes (imports, PUT/PATCH/DELETE) tell a full disk or a lost connection apart from
  // any other failure, and readiness hears of it.
  const storage = new StorageHealth();
  const writeRecords = database.engine.writeRecords.bind(database.engine);
  database.engine.writeRecords = (fn) => watchedWrite(storage, () => writeRecords(fn));
  return Object.assign(database, { storage });
}

const ADAPTERS: Record<Dialect, Adapter> = { sqlite: sqliteAdapter, postgres: postgresAdapter };

/** The SQL of a dialect known by name only (a function given `dialect`, not the database). */
export function adapterOf(dialect: Dialect): Adapter {
  return ADAPTERS[dialect];
}
