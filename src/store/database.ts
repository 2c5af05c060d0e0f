/**
 * The store's entry: opening a database (the dialect is chosen from the URL in dialects/index.ts)
 * and the types every part of the store uses. What differs between SQLite and PostgreSQL lives
 * in dialects/ behind the `Engine` interface.
 */

export type { Adapter, Database, Dialect, Engine, OpenOptions } from './dialects/engine.js';
export { adapterOf, openDatabase } from './dialects/index.js';
export { preparedStatement } from './dialects/sqlite.js';

/** The address without its password (in the user part or a `password=` parameter), for output and logs. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):([^@]*)@/, '//$1:***@').replace(/([?&]password=)[^&]*/gi, '$1***');
}
