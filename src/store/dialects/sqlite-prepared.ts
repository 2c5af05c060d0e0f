/** Prepared statements of a SQLite connection, kept for the connection's life. */
import type SQLite from 'better-sqlite3';

const preparedByConnection = new WeakMap<SQLite.Database, Map<string, SQLite.Statement>>();

/**
 * A prepared statement of `raw`, prepared once per SQL text and kept for the connection's life.
 * Besides saving the prepare, this keeps statements from being garbage-collected while the
 * process runs: on Node.js 24, better-sqlite3 12's statement finalizer can abort the process
 * (`Assertion failed: (env) != nullptr` in RemoveEnvironmentCleanupHook, WiseLibs/better-sqlite3
 * #1515), so no code path may drop prepared statements. Use this for every raw prepare.
 */
export function preparedStatement(raw: SQLite.Database, sqlText: string): SQLite.Statement {
  let byText = preparedByConnection.get(raw);
  if (!byText) {
    byText = new Map();
    preparedByConnection.set(raw, byText);
  }
  let stmt = byText.get(sqlText);
  if (!stmt) {
    stmt = raw.prepare(sqlText);
    byText.set(sqlText, stmt);
  }
  return stmt;
}
