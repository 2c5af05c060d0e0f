/** Chooses the dialect once, from the database URL: `sqlite:PATH` or `postgres://...`. */
import type { Logger } from '../../logger.js';
import { sqliteFileOf } from '../../redact-url.js';
import type { Adapter, Database, Dialect, OpenOptions } from './engine.js';
import { openPostgres, postgresAdapter } from './postgres.js';
import { openSqlite, sqliteAdapter } from './sqlite.js';

/** `logger` hears what happens to PostgreSQL sessions (none: nothing is said; pino is not loaded). */
export function openDatabase(url: string, logger?: Logger, options: OpenOptions = {}): Database {
  const file = sqliteFileOf(url);
  return file === undefined ? openPostgres(url, logger) : openSqlite(file, options);
}

const ADAPTERS: Record<Dialect, Adapter> = { sqlite: sqliteAdapter, postgres: postgresAdapter };

/** The SQL of a dialect known by name only (a function given `dialect`, not the database). */
export function adapterOf(dialect: Dialect): Adapter {
  return ADAPTERS[dialect];
}
