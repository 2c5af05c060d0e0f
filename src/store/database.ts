/**
 * The store's entry: opening a database (the dialect is chosen from the URL in dialects/index.ts)
 * and the types every part of the store uses. What differs between SQLite and PostgreSQL lives
 * in dialects/ behind the `Engine` interface.
 */

export { redactUrl } from '../redact-url.js';
export type {
  ActionStatements,
  Adapter,
  Currency,
  Database,
  Dialect,
  Engine,
  HotQueries,
  HotValue,
  OpenOptions,
  Pages,
} from './dialects/engine.js';
export { adapterOf, openDatabase } from './dialects/index.js';
export { preparedStatement } from './dialects/sqlite-prepared.js';
