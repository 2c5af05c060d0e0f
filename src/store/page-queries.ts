/**
 * The list page query, as both dialects share it: one page of a register in (updated_at, id)
 * order, with its filters, text search, `updated_since` and cursor position. Each dialect reads
 * it its own way (`Pages` in dialects/engine.ts): SQLite in sqlite-reads.ts, PostgreSQL in
 * postgres-reads.ts; this file holds what they have in common, the page's conditions, built as
 * structure rather than text.
 */
import type { Register } from '../registers/define.js';

export interface ListQuery {
  workspaceId: string;
  register: Register;
  filters: Partial<Record<string, string>>;
  searchWords: readonly string[];
  updatedSince?: string;
  after?: { updatedAt: string; id: string };
  limit: number;
  /**
   * Also return the snapshot the page was read in, which tells a page read ahead is still
   * current (read-ahead.ts): asked only where the currency is a snapshot (PostgreSQL).
   */
  withSnapshot?: boolean;
}

export interface PageRows {
  /**
   * The page's documents, in order: a Buffer of them joined by commas (the bytes of `data`'s
   * inside) when the database hands back bytes (SQLite), so they reach the socket without being
   * decoded into a string and encoded again; else the documents as strings, which the page's
   * body is written from (read/pages.ts), never joined into one string.
   */
  documents: Buffer | readonly string[];
  /** The last record of the page: where the next page starts. */
  last: { updatedAt: string; id: string } | undefined;
  hasMore: boolean;
  /** The snapshot the page was read in, when asked for and the page has a row (PostgreSQL). */
  snapshot?: string;
}

/** One condition of a page's WHERE: its values, and its SQL given how each value is referred to. */
export interface Condition {
  values: string[];
  sql(refs: readonly string[]): string;
}

/** The conditions joined by AND, each value referred to as `ref()` gives, in order. */
export const whereOf = (conditions: readonly Condition[], ref: () => string): string =>
  conditions.map((c) => c.sql(c.values.map(ref))).join(' AND ');

/**
 * The conditions of a page's WHERE (without the search), each with its values. Built as
 * structure, not text, so that the same page can be written two ways from it: with `?` for each
 * value (the page alone), and with each value read from a batch's row (postgres-reads.ts).
 */
export function pageConditions(q: ListQuery): Condition[] {
  // Column names come from the register's declared filters only, never from the request.
  const conditions: Condition[] = [
    { values: [q.workspaceId], sql: ([w]) => `workspace_id = ${w}` },
    { values: [q.register.path], sql: ([r]) => `register = ${r}` },
  ];
  for (const name of q.register.filters) {
    const value = q.filters[name];
    if (value !== undefined) conditions.push({ values: [value], sql: ([v]) => `${name} = ${v}` });
  }
  // Past the first page the cursor's position implies the watermark (a cursor is bound to its
  // updated_since, and its record was after it). Leaving the watermark out lets SQLite seek the
  // index to the position; with both, it ranged from the watermark and filtered every row up
  // to the position, so each later page of an updated_since walk cost more than the one before.
  if (q.updatedSince !== undefined && !q.after) conditions.push({ values: [q.updatedSince], sql: ([s]) => `updated_at > ${s}` });
  if (q.after) conditions.push({ values: [q.after.updatedAt, q.after.id], sql: ([u, i]) => `(updated_at, id) > (${u}, ${i})` });
  return conditions;
}

/** The WHERE clause of a page (without the search) with `?` for each value, and the values. */
export function pageWhere(q: ListQuery): { where: string; params: (string | number)[] } {
  const conditions = pageConditions(q);
  return { where: whereOf(conditions, () => '?'), params: conditions.flatMap((c) => c.values) };
}

/**
 * A page read as rows of (id, updated_at, doc), `limit + 1` of them to know whether more exist;
 * with `withSnapshot`, each row's fourth column is the statement's snapshot (further columns,
 * such as a batch's page number, are not looked at).
 */
export function pageOfRows(rows: [string, string, string, ...string[]][], limit: number, withSnapshot: boolean): PageRows {
  const hasMore = rows.length > limit;
  if (hasMore) rows.pop();
  const lastRow = rows[rows.length - 1];
  const snapshot = withSnapshot ? rows[0]?.[3] : undefined;
  return {
    documents: rows.map((r) => r[2]),
    last: hasMore && lastRow ? { updatedAt: lastRow[1], id: lastRow[0] } : undefined,
    hasMore,
    ...(snapshot ? { snapshot } : {}),
  };
}
