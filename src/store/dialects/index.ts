/** Chooses the dialect once, from the database URL: `sqlite:PATH` or `postgres://...`. */
import type { Logger } from '../../logger.js';
import type { Adapter, Database, Dialect, OpenOptions } from './engine.js';
import { openPostgres, postgresAdapter } from './postgres.js';
import { openSqlite, sqliteAdapter } from './sqlite.js';

/** `logger` hears what happens to PostgreSQL sessions (none: nothing is said; pino is not loaded). */
export function openDatabase(url: string, logger?: Logger, options: OpenOptions = {}): Database {
  if (url.startsWith('sqlite:')) return openSqlite(url.slice('sqlite:'.length), options);
  return openPostgres(url, logger);
}

const ADAPTERS: Record<Dialect, Adapter> = { sqlite: sqliteAdapter, postgres: postgresAdapter };

/** The SQL of a dialect known by name only (a function given `dialect`, not the database). */
export function adapterOf(dialect: Dialect): Adapter {
  return ADAPTERS[dialect];
}
