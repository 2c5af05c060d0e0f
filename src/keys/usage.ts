/**
 * API requests per key over time, for the console's Overview.
 *
 * Counting is on the hot path of every authenticated `/api/v1` request, so it is an in-memory
 * increment and nothing else: one Map lookup by key id and one integer add. The counts are
 * kept per key and hour (the finest bucket the Overview draws: a week is 168 rows a key),
 * written once a minute (and at close) as one batched upsert that ADDS to the stored rows,
 * so several API processes on one database sum correctly. A crash loses at most the last
 * minute of counts, which is acceptable for a chart (the rate limiter and the audit trail do
 * not depend on it).
 *
 * What is counted: every request that authenticated with a valid key, whatever its answer
 * (200, 404, 403 missing scope, 429 rate limited...): it is a request the key's holder made.
 * Requests refused at authentication (401) have no trustworthy key to count against.
 */
import { type Kysely, sql } from '#kysely';
import type { Logger } from '../logger.js';
import type { DB } from '../store/schema.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
/** How often the counts are written. */
export const USAGE_FLUSH_INTERVAL_MS = MINUTE_MS;
/** Rows older than this are pruned (the Overview shows at most 7 days). */
export const USAGE_RETENTION_DAYS = 90;
/** Rows per INSERT: 4 parameters a row stays far below SQLite's and PostgreSQL's limits. */
const BATCH_ROWS = 1000;

/** The running count of one key in its current hour; reused while the hour lasts. */
interface KeyHour {
  workspaceId: string;
  keyId: string;
  /** Hours since the epoch. */
  hour: number;
  requests: number;
}

export interface UsageRow {
  workspace_id: string;
  key_id: string;
  /** ISO 8601 start of the hour, e.g. 2026-11-22T08:00:00.000Z. */
  hour: string;
  requests: number;
}

const hourIso = (hour: number) => new Date(hour * HOUR_MS).toISOString();

export class UsageCounter {
  /** Current hour per key id. Replaced (not cleared) at each flush. */
  private current = new Map<string, KeyHour>();
  /** Finished hours not yet written (a key's hour rolled over between two flushes). */
  private finished: KeyHour[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private lastPrune = 0;
  private closed = false;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: () => number,
    private readonly logger?: Logger,
  ) {}

  /**
   * Counts one request. Allocation-free except the first request of a key after a flush; the
   * write timer starts with the first request, so processes that serve no API never run it.
   */
  count(workspaceId: string, keyId: string, nowMs: number): void {
    const hour = Math.floor(nowMs / HOUR_MS);
    const c = this.current.get(keyId);
    if (c !== undefined && c.hour === hour) {
      c.requests++;
      return;
    }
    if (c !== undefined) this.finished.push(c);
    this.current.set(keyId, { workspaceId, keyId, hour, requests: 1 });
    if (this.timer === undefined && !this.closed) this.start();
  }

  /** Counts not yet written, summed (for tests and diagnostics). */
  pendingRequests(): number {
    let n = 0;
    for (const c of this.current.values()) n += c.requests;
    for (const c of this.finished) n += c.requests;
    return n;
  }

  private start(): void {
    this.timer = setInterval(() => {
      this.flush().catch((err: unknown) => this.logger?.warn({ err }, 'could not write API usage counts; kept for the next attempt'));
    }, USAGE_FLUSH_INTERVAL_MS);
    // The counter never keeps a process alive; close() writes the last counts.
    this.timer.unref();
  }

  /**
   * Writes every count so far in one batched upsert (adding to what other processes wrote).
   * Flushes never overlap; counts made during a flush go to the next one. If the write fails,
   * the counts are kept and written by the next flush.
   */
  flush(): Promise<void> {
    const run = this.flushing.then(() => this.write());
    this.flushing = run.catch(() => undefined);
    return run;
  }

  private async write(): Promise<void> {
    const taken = this.finished;
    const current = this.current;
    this.finished = [];
    this.current = new Map();
    // Sum by (key, hour): one row per conflict target, as PostgreSQL requires in one INSERT.
    const rows = new Map<string, UsageRow>();
    const add = (c: KeyHour) => {
      const id = `${c.keyId}|${c.hour}`;
      const row = rows.get(id);
      if (row) row.requests += c.requests;
      else rows.set(id, { workspace_id: c.workspaceId, key_id: c.keyId, hour: hourIso(c.hour), requests: c.requests });
    };
    for (const c of taken) add(c);
    for (const c of current.values()) add(c);
    const all = [...rows.values()];
    // A process that served no request (a CLI command) writes nothing, not even the pruning.
    if (all.length === 0) return;
    let written = 0;
    try {
      for (; written < all.length; written += BATCH_ROWS) {
        await this.db
          .insertInto('api_usage')
          .values(all.slice(written, written + BATCH_ROWS))
          .onConflict((oc) =>
            oc.columns(['workspace_id', 'hour', 'key_id']).doUpdateSet({ requests: sql<number>`api_usage.requests + excluded.requests` }),
          )
          .execute();
      }
    } catch (err) {
      // Each batch is one statement: the ones before the failure are written, the rest is kept.
      for (const r of all.slice(written)) {
        this.finished.push({
          workspaceId: r.workspace_id,
          keyId: r.key_id,
          hour: Date.parse(r.hour) / HOUR_MS,
          requests: r.requests,
        });
      }
      throw err;
    }
    await this.prune();
  }

  /** Deletes rows past the retention, at most once an hour per process. */
  private async prune(): Promise<void> {
    const now = this.clock();
    if (now - this.lastPrune < HOUR_MS) return;
    this.lastPrune = now;
    const cutoff = new Date(now - USAGE_RETENTION_DAYS * DAY_MS).toISOString();
    await this.db.deleteFrom('api_usage').where('hour', '<', cutoff).execute();
  }

  /** Stops the timer and writes the last counts. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}

export type UsageBucket = 'hour' | 'day';

export interface UsageSeries {
  /** Bucket starts, ISO 8601, every bucket of the range (zero-filled). */
  buckets: string[];
  /** One series per key that made requests in the range, most requests first. */
  keys: { keyId: string; name: string | null; total: number; requests: number[] }[];
  total: number;
}

const BUCKET_MS: Record<UsageBucket, number> = { hour: HOUR_MS, day: DAY_MS };
/** Characters of the stored ISO hour that name its bucket: `2026-11-22T08` (hour), `2026-11-22` (day). */
const BUCKET_PREFIX: Record<UsageBucket, number> = { hour: 13, day: 10 };

/**
 * Requests per key and bucket in [from, to) for a chart: hours for a day, hours or days for a
 * week. Reads the rows written so far (what a process counted since its last flush is not included).
 */
export async function usageSeries(
  db: Kysely<DB>,
  workspaceId: string,
  range: { from: number; to: number; bucket: UsageBucket },
): Promise<UsageSeries> {
  const size = BUCKET_MS[range.bucket];
  const start = Math.floor(range.from / size) * size;
  const buckets: string[] = [];
  for (let t = start; t < range.to; t += size) buckets.push(new Date(t).toISOString());
  const prefix = BUCKET_PREFIX[range.bucket];
  const rows = await db
    .selectFrom('api_usage')
    .leftJoin('api_keys', 'api_keys.key_id', 'api_usage.key_id')
    .select([
      'api_usage.key_id as key_id',
      'api_keys.name as name',
      sql<string>`substr(api_usage.hour, 1, ${sql.lit(prefix)})`.as('bucket'),
      sql<string | number>`sum(api_usage.requests)`.as('requests'),
    ])
    .where('api_usage.workspace_id', '=', workspaceId)
    .where('api_usage.hour', '>=', new Date(start).toISOString())
    .where('api_usage.hour', '<', new Date(range.to).toISOString())
    .groupBy(['api_usage.key_id', 'api_keys.name', sql`substr(api_usage.hour, 1, ${sql.lit(prefix)})`])
    .execute();
  const index = new Map(buckets.map((b, i) => [b.slice(0, prefix), i]));
  const byKey = new Map<string, UsageSeries['keys'][number]>();
  let total = 0;
  for (const r of rows) {
    const i = index.get(r.bucket);
    if (i === undefined) continue;
    let series = byKey.get(r.key_id);
    if (!series) {
      series = { keyId: r.key_id, name: r.name, total: 0, requests: buckets.map(() => 0) };
      byKey.set(r.key_id, series);
    }
    const n = Number(r.requests);
    series.requests[i] = (series.requests[i] ?? 0) + n;
    series.total += n;
    total += n;
  }
  const keys = [...byKey.values()].sort((a, b) => b.total - a.total || a.keyId.localeCompare(b.keyId));
  return { buckets, keys, total };
}
