/**
 * The few queries on every API request (key lookup, list page, detail) skip the query builder:
 * their SQL is fixed text per query shape, prepared once and run with positional parameters,
 * rows returned as arrays. Written with `?` placeholders; PostgreSQL gets `$n` and a named
 * (server-side prepared) statement.
 */
import { createHash } from 'node:crypto';
import type SQLite from 'better-sqlite3';
import type { Database } from './database.js';

/** A bound value; arrays only on PostgreSQL (a batch of pages, page-batches.ts). */
type Value = string | number | null | readonly string[];

export class HotQueries {
  private readonly sqliteStatements = new Map<string, SQLite.Statement>();
  private readonly pgText = new Map<string, { name: string; text: string }>();

  /**
   * The placeholder of a LIMIT. SQLite (3.53, as better-sqlite3 builds it) lets the planner use
   * the value bound to a bare `LIMIT ?`, so binding it expires the statement and every run
   * re-parses and re-plans it: a third of a page query's time (perf probes counted one parse per
   * step). `+?` is an expression the planner does not look into; the value is the same.
   * PostgreSQL keeps `?`: it caches its plans its own way.
   */
  readonly limit: string;

  constructor(private readonly database: Pick<Database, 'dialect' | 'sqlite' | 'sqliteReader' | 'pool'>) {
    this.limit = database.dialect === 'sqlite' ? '+?' : '?';
  }

  /** Runs a query and returns its rows as arrays, columns in SELECT order. */
  async rows(sqlText: string, params: readonly Value[]): Promise<unknown[][]> {
    const { pool } = this.database;
    const sqlite = this.database.sqliteReader ?? this.database.sqlite;
    if (sqlite) {
      let stmt = this.sqliteStatements.get(sqlText);
      if (!stmt) {
        stmt = sqlite.prepare(sqlText).raw(true);
        this.sqliteStatements.set(sqlText, stmt);
      }
      return stmt.all(...params) as unknown[][];
    }
    if (!pool) throw new Error('no database connection');
    let prepared = this.pgText.get(sqlText);
    if (!prepared) {
      let n = 0;
      prepared = {
        name: `wsops_${createHash('sha1').update(sqlText).digest('hex').slice(0, 16)}`,
        text: sqlText.replace(/\?/g, () => `$${++n}`),
      };
      this.pgText.set(sqlText, prepared);
    }
    const result = await pool.query({ name: prepared.name, text: prepared.text, values: params as Value[], rowMode: 'array' });
    return result.rows as unknown[][];
  }
}
