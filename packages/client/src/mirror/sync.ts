/**
 * One mirror run, exactly "Keeping a mirror current" (section 4) for each chosen register:
 *  - every run first follows the register's deletions feed from its saved position − overlap
 *    (from its start when there is none) and removes each copy older than its tombstone, so a
 *    deletion reaches the mirror on the next run, incremental or not;
 *  - the first run, `full`, any run a day after the last full walk, and a run whose feed
 *    position fell behind the feed's retention (400 `deletions_beyond_retention`) walk the
 *    whole register and afterwards remove the rows that walk did not see;
 *  - other runs walk with `updated_since` = watermark − overlap (default 5 minutes), so a
 *    record stamped just before the watermark but committed after it is still caught;
 *  - the watermark (highest `updated_at` seen) and the feed's position (highest `deleted_at`
 *    seen) are saved together, in one statement, only when both walks have finished.
 * Every page is applied in its own transaction, so a run killed anywhere leaves rows that
 * are correct copies and positions that are not ahead of them: the next run converges.
 */
import { randomUUID } from 'node:crypto';
import type { WsopsClient } from '../client.js';
import { WsopsApiError } from '../errors.js';
import type { AbortSignalLike } from '../fetch-types.js';
import type { Page, Tombstone } from '../resource.js';
import type { RegisterDescriptor } from './registers.js';
import type { MirrorRecord, MirrorStore, RegisterState } from './store.js';

export const DEFAULT_OVERLAP_MS = 5 * 60_000;
export const FULL_WALK_EVERY_MS = 24 * 3600_000;

export interface SyncOptions {
  client: WsopsClient;
  store: MirrorStore;
  registers: readonly RegisterDescriptor[];
  /** Walk everything and remove what disappeared. */
  full?: boolean;
  /** Subtracted from the watermark for `updated_since`. Default 5 minutes. */
  overlapMs?: number;
  /** Page size (1..1000). Default 1000. */
  pageSize?: number;
  /** The clock (ms), for the daily full walk. */
  now?: () => number;
  /** Told after each page is stored. */
  onProgress?(register: RegisterDescriptor, stored: number): void;
  /** Told when a run walks a register in full on its own account, and why. */
  onNotice?(register: RegisterDescriptor, message: string): void;
  signal?: AbortSignalLike;
}

/**
 * Why a run walked a register in full: its first run, `full` asked for, the daily full walk, or
 * the deletions feed no longer reaching back to the last run (its retention passed).
 */
export type FullReason = 'first' | 'requested' | 'daily' | 'deletions_beyond_retention';

export interface RegisterSummary {
  mode: 'full' | 'incremental';
  /** Set when `mode` is `full`. */
  fullReason?: FullReason;
  upserted: number;
  /** Rows removed: by tombstones of the deletions feed, and after a full walk those it did not see. */
  removed: number;
  watermark: string | null;
  /** The deletions feed's position after this run. */
  deletionsSince: string | null;
}

export interface SyncSummary {
  /** When the run began (ISO 8601): tells apart runs in a `--json` log, e.g. which event caused which run. */
  startedAt: string;
  registers: Record<string, RegisterSummary>;
  upserted: number;
  removed: number;
  durationMs: number;
}

function minus(iso: string, ms: number): string {
  return new Date(Date.parse(iso) - ms).toISOString();
}

const isBeyondRetention = (err: unknown) => err instanceof WsopsApiError && err.code === 'deletions_beyond_retention';

/**
 * Follows the deletions feed from `since` (from its start when undefined), applying each page;
 * returns the rows removed and the highest `deleted_at` seen.
 */
async function followDeletions(
  options: SyncOptions,
  register: RegisterDescriptor,
  since: string | undefined,
): Promise<{ removed: number; highest: string | null }> {
  const resource = client(options, register);
  const params = { limit: options.pageSize ?? 1000, ...(since ? { since } : {}) };
  let removed = 0;
  let highest: string | null = null;
  let cursor: string | undefined;
  do {
    const page: Page<Tombstone> = await resource.deletionsPage({ ...params, ...(cursor ? { cursor } : {}) }, { signal: options.signal });
    if (page.data.length > 0) {
      removed += await options.store.applyDeletions(register, page.data);
      highest = page.data[page.data.length - 1]!.deleted_at;
    }
    cursor = page.has_more && page.next_cursor ? page.next_cursor : undefined;
  } while (cursor);
  return { removed, highest };
}

const client = (options: SyncOptions, register: RegisterDescriptor) => options.client.register(register.path as never);

function fullReasonOf(options: SyncOptions, state: RegisterState, now: number): FullReason | undefined {
  if (options.full === true) return 'requested';
  if (state.watermark === null || state.lastFullAt === null) return 'first';
  if (now - Date.parse(state.lastFullAt) >= FULL_WALK_EVERY_MS) return 'daily';
  return undefined;
}

async function syncRegister(options: SyncOptions, register: RegisterDescriptor): Promise<RegisterSummary> {
  const { store } = options;
  const now = (options.now ?? Date.now)();
  const overlapMs = options.overlapMs ?? DEFAULT_OVERLAP_MS;
  const state = await store.state(register);
  let fullReason = fullReasonOf(options, state, now);

  // The deletions feed first, from its position less the overlap (a tombstone is stamped before
  // its transaction commits, as updated_at is). Its tombstones remove only older copies, so one
  // applied before the walk below cannot remove a record the walk then brings back newer.
  let deletions: { removed: number; highest: string | null };
  let fromStart = state.deletionsSince === null;
  try {
    deletions = await followDeletions(options, register, state.deletionsSince ? minus(state.deletionsSince, overlapMs) : undefined);
  } catch (err) {
    if (!isBeyondRetention(err)) throw err;
    // Deletions from before the feed's retention may be gone from it: only a full walk finds them.
    if (fullReason === undefined) {
      fullReason = 'deletions_beyond_retention';
      options.onNotice?.(
        register,
        `the deletions feed no longer reaches back to the last run (${state.deletionsSince}); walking ${register.path} in full`,
      );
    }
    deletions = await followDeletions(options, register, undefined);
    fromStart = true;
  }
  const full = fullReason !== undefined;
  const walkId = randomUUID();
  const params: Record<string, unknown> = { limit: options.pageSize ?? 1000 };
  if (!full && state.watermark) params.updated_since = minus(state.watermark, overlapMs);

  const resource = client(options, register);
  let highest = state.watermark;
  let upserted = 0;
  // Fetch the next page while the current one is written.
  let next: Promise<Page<MirrorRecord>> | undefined = resource.listPage(params, { signal: options.signal });
  while (next) {
    const page: Page<MirrorRecord> = await next;
    next =
      page.has_more && page.next_cursor
        ? resource.listPage({ ...params, cursor: page.next_cursor }, { signal: options.signal })
        : undefined;
    // Keep a rejected prefetch from being reported as unhandled while this page is written.
    next?.catch(() => {});
    if (page.data.length > 0) {
      await store.upsert(register, page.data, walkId);
      upserted += page.data.length;
      const last = page.data[page.data.length - 1]!.updated_at as string;
      if (highest === null || last > highest) highest = last;
      options.onProgress?.(register, upserted);
    }
  }
  // The walk finished: only now may unseen rows be removed and the positions move.
  const unseen = full ? await store.removeUnseen(register, walkId) : 0;
  // After a walk of the whole feed, its newest tombstone is the position, or none when it is
  // empty: an old position kept past the retention would make every later run walk in full.
  const deletionsSince = fromStart
    ? deletions.highest
    : deletions.highest !== null && state.deletionsSince !== null && deletions.highest > state.deletionsSince
      ? deletions.highest
      : state.deletionsSince;
  await store.saveState(register, {
    watermark: highest,
    lastFullAt: full ? new Date(now).toISOString() : state.lastFullAt,
    deletionsSince,
  });
  return {
    mode: full ? 'full' : 'incremental',
    ...(fullReason ? { fullReason } : {}),
    upserted,
    removed: deletions.removed + unseen,
    watermark: highest,
    deletionsSince,
  };
}

/** Runs one pass over the registers, one after the other. */
export async function syncOnce(options: SyncOptions): Promise<SyncSummary> {
  const started = performance.now();
  const startedAt = new Date((options.now ?? Date.now)()).toISOString();
  await options.store.prepare(options.registers);
  const summary: SyncSummary = { startedAt, registers: {}, upserted: 0, removed: 0, durationMs: 0 };
  for (const register of options.registers) {
    const r = await syncRegister(options, register);
    summary.registers[register.path] = r;
    summary.upserted += r.upserted;
    summary.removed += r.removed;
  }
  summary.durationMs = Math.round(performance.now() - started);
  return summary;
}
