/**
 * One mirror run, exactly "Keeping a mirror current" (section 4) for each chosen register:
 *  - the first run, `full`, and any run a day after the last full walk walk the whole
 *    register and afterwards remove the rows that walk did not see (deletions emit nothing);
 *  - other runs walk with `updated_since` = watermark − overlap (default 5 minutes), so a
 *    record stamped just before the watermark but committed after it is still caught;
 *  - the watermark (highest `updated_at` seen) is saved only when a walk has finished.
 * Every page is upserted in its own transaction, so a run killed anywhere leaves rows that
 * are correct copies and a watermark that is not ahead of them: the next run converges.
 */
import { randomUUID } from 'node:crypto';
import type { WsopsClient } from '../client.js';
import type { Page } from '../resource.js';
import type { RegisterDescriptor } from './registers.js';
import type { MirrorRecord, MirrorStore } from './store.js';

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
  signal?: AbortSignal;
}

export interface RegisterSummary {
  mode: 'full' | 'incremental';
  upserted: number;
  removed: number;
  watermark: string | null;
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

async function syncRegister(options: SyncOptions, register: RegisterDescriptor): Promise<RegisterSummary> {
  const { client, store } = options;
  const now = (options.now ?? Date.now)();
  const overlapMs = options.overlapMs ?? DEFAULT_OVERLAP_MS;
  const state = await store.state(register);
  const full =
    options.full === true ||
    state.watermark === null ||
    state.lastFullAt === null ||
    now - Date.parse(state.lastFullAt) >= FULL_WALK_EVERY_MS;
  const walkId = randomUUID();
  const params: Record<string, unknown> = { limit: options.pageSize ?? 1000 };
  if (!full && state.watermark) params.updated_since = minus(state.watermark, overlapMs);

  const resource = client.register(register.path as never);
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
  // The walk finished: only now may deletions be applied and the watermark move.
  const removed = full ? await store.removeUnseen(register, walkId) : 0;
  await store.saveState(register, { watermark: highest, lastFullAt: full ? new Date(now).toISOString() : state.lastFullAt });
  return { mode: full ? 'full' : 'incremental', upserted, removed, watermark: highest };
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
