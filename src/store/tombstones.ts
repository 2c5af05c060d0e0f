/**
 * Tombstones: what the deletions feed serves. Each dialect's record batch writes one when it
 * deletes a record and removes it when a record is written again under the same id
 * (dialects/sqlite.ts, dialects/postgres.ts), in the transaction of that write; this file reads
 * a page of them and prunes those past the retention.
 */
import { type Kysely, sql } from '#kysely';
import type { DB } from './schema.js';

/**
 * When a record deleted at `now` counts as deleted: strictly after its last `updated_at`, so
 * that "a tombstone wins only over an older updated_at" always removes the copy it deletes,
 * even when the write and the delete fall in the same millisecond.
 */
export function deletedAtOf(updatedAt: string, now: number): string {
  return new Date(Math.max(now, Date.parse(updatedAt) + 1)).toISOString();
}

export interface TombstonePosition {
  deletedAt: string;
  id: string;
}

export interface TombstoneQuery {
  workspaceId: string;
  register: string;
  /** Only tombstones deleted strictly after this instant. */
  since?: string;
  /**
   * The retention horizon: older tombstones are never served, pruned yet or not, so a walk of
   * the whole feed ends at a position a later `since` may still use.
   */
  notBefore: string;
  /** Where the previous page ended (the cursor's position). */
  after?: TombstonePosition;
  limit: number;
}

export interface TombstonePage {
  data: { id: string; deleted_at: string }[];
  /** Where the next page starts, when there is one. */
  next: TombstonePosition | undefined;
}

/** One page of a register's tombstones in ascending `(deleted_at, id)`: the feed's order. */
export async function tombstonePage(db: Kysely<DB>, q: TombstoneQuery): Promise<TombstonePage> {
  let query = db
    .selectFrom('record_tombstones')
    .select(['id', 'deleted_at'])
    .where('workspace_id', '=', q.workspaceId)
    .where('register', '=', q.register)
    .where('deleted_at', '>=', q.notBefore);
  // As on lists, a cursor's position implies its `since` (it is bound to it).
  if (q.after) query = query.where(sql<boolean>`(deleted_at, id) > (${q.after.deletedAt}, ${q.after.id})`);
  else if (q.since !== undefined) query = query.where('deleted_at', '>', q.since);
  const rows = await query
    .orderBy('deleted_at')
    .orderBy('id')
    .limit(q.limit + 1)
    .execute();
  const hasMore = rows.length > q.limit;
  if (hasMore) rows.pop();
  const last = rows[rows.length - 1];
  return {
    data: rows.map((r) => ({ id: r.id, deleted_at: r.deleted_at })),
    next: hasMore && last ? { deletedAt: last.deleted_at, id: last.id } : undefined,
  };
}

/** Removes tombstones deleted before `cutoff` (ISO), in every workspace; returns how many. */
export async function pruneTombstones(db: Kysely<DB>, cutoff: string): Promise<number> {
  const result = await db.deleteFrom('record_tombstones').where('deleted_at', '<', cutoff).executeTakeFirst();
  return Number(result.numDeletedRows);
}
