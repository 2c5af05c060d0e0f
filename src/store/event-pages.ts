/**
 * What the events API serves (src/read/events.ts): a page of a workspace's events in ascending
 * `(created_at, id)`, of the types the caller may see, and one event by id. The stored body is
 * served as it is: each item is exactly what the event's webhook deliveries carry.
 */
import type { Kysely } from '#kysely';
import type { Database } from './database.js';
import type { DB } from './schema.js';

export interface EventPosition {
  createdAt: string;
  id: string;
}

export interface EventQuery {
  workspaceId: string;
  /** The types served (never empty): those asked for that the key may see. */
  types: readonly string[];
  /** Only events created at or after this instant. */
  since?: string;
  /** The retention horizon: older events are never served, pruned yet or not. */
  notBefore: string;
  /**
   * Where the previous page ended (the cursor's position), not before `notBefore` (the handler
   * refuses such a cursor): it then implies both `since` and `notBefore`.
   */
  after?: EventPosition;
  limit: number;
}

export interface EventPage {
  /** The stored bodies, in order. */
  bodies: string[];
  /** Where the next page starts, when there is one. */
  next: EventPosition | undefined;
}

/**
 * A page as one prepared statement of the hot queries (engine.ts): on SQLite on the read
 * connection, as the registers' pages are, not on the writer's through the query builder, whose
 * building, compiling and per-row objects cost more than the query; on PostgreSQL a named
 * statement, parsed once per session. One text per number of types and kind of bound, so a
 * handful per process.
 */
export async function eventPage(database: Pick<Database, 'engine'>, q: EventQuery): Promise<EventPage> {
  const types = q.types.map(() => '?').join(', ');
  // One lower bound only. Past the first page the cursor's position implies `since` (a cursor is
  // bound to it) and the horizon; with either beside it, SQLite (after ANALYZE) ranged from that
  // bound or skip-scanned and sorted, filtering every row up to the position, as pageConditions in
  // page-queries.ts found for the registers (figures: ADR 51).
  const [bound, values] = q.after
    ? ['(created_at, id) > (?, ?)', [q.after.createdAt, q.after.id]]
    : ['created_at >= ?', [q.since !== undefined && q.since > q.notBefore ? q.since : q.notBefore]];
  const rows = (await database.engine.hot.rows(
    `SELECT id, created_at, body FROM events WHERE workspace_id = ? AND type IN (${types}) AND ${bound} ORDER BY created_at, id LIMIT ${database.engine.limitPlaceholder}`,
    [q.workspaceId, ...q.types, ...values, q.limit + 1],
  )) as [string, string, string][];
  const hasMore = rows.length > q.limit;
  if (hasMore) rows.pop();
  const last = rows[rows.length - 1];
  return { bodies: rows.map((r) => r[2]), next: hasMore && last ? { createdAt: last[1], id: last[0] } : undefined };
}

/** One event's stored body, if it is of the workspace, of a type given, and not older than `notBefore`. */
export async function eventBody(
  db: Kysely<DB>,
  q: { workspaceId: string; id: string; types: readonly string[]; notBefore: string },
): Promise<string | undefined> {
  const row = await db
    .selectFrom('events')
    .select('body')
    .where('id', '=', q.id)
    .where('workspace_id', '=', q.workspaceId)
    .where('type', 'in', q.types)
    .where('created_at', '>=', q.notBefore)
    .executeTakeFirst();
  return row?.body;
}
