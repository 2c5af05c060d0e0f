/**
 * What the events API serves (src/read/events.ts): a page of a workspace's events in ascending
 * `(created_at, id)`, of the types the caller may see, and one event by id. The stored body is
 * served as it is: each item is exactly what the event's webhook deliveries carry.
 */
import { type Kysely, sql } from '#kysely';
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

export async function eventPage(db: Kysely<DB>, q: EventQuery): Promise<EventPage> {
  let query = db
    .selectFrom('events')
    .select(['id', 'created_at', 'body'])
    .where('workspace_id', '=', q.workspaceId)
    .where('type', 'in', q.types);
  // One lower bound only. Past the first page the cursor's position implies `since` (a cursor is
  // bound to it) and the horizon; with either beside it, SQLite (after ANALYZE) ranged from that
  // bound or skip-scanned and sorted, filtering every row up to the position, as pageConditions in
  // page-queries.ts found for the registers (figures: ADR 51).
  if (q.after) query = query.where(sql<boolean>`(created_at, id) > (${q.after.createdAt}, ${q.after.id})`);
  else query = query.where('created_at', '>=', q.since !== undefined && q.since > q.notBefore ? q.since : q.notBefore);
  const rows = await query
    .orderBy('created_at')
    .orderBy('id')
    .limit(q.limit + 1)
    .execute();
  const hasMore = rows.length > q.limit;
  if (hasMore) rows.pop();
  const last = rows[rows.length - 1];
  return { bodies: rows.map((r) => r.body), next: hasMore && last ? { createdAt: last.created_at, id: last.id } : undefined };
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
