import type { Random } from './random.js';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
export const YEAR = 365 * DAY;

/** ISO 8601 UTC with milliseconds, the only timestamp form of the API. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** `YYYY-MM-DD` (UTC). */
export function isoDate(ms: number): string {
  return iso(ms).slice(0, 10);
}

/** Midnight UTC of the day that holds `ms`. */
export function startOfDay(ms: number): number {
  return ms - (((ms % DAY) + DAY) % DAY);
}

/** A `YYYY-MM-DD` date moved by whole days. */
export function addDaysToDate(date: string, days: number): string {
  return isoDate(Date.parse(`${date}T00:00:00.000Z`) + days * DAY);
}

/** A random instant in [from, to]. */
export function between(rng: Random, from: number, to: number): number {
  return to <= from ? from : from + Math.floor(rng.float() * (to - from + 1));
}

export interface Stamps {
  created: number;
  updated: number;
}

/**
 * `updated_at` is uniform over the year before `now`, so `updated_since = now - 3.65 days`
 * matches about 1% of the records (what an incremental sync sees); `created_at` lies up to
 * `maxAge` before it.
 */
export function recordStamps(rng: Random, now: number, maxAge = 400 * DAY): Stamps {
  const updated = now - Math.floor(rng.float() * YEAR);
  const created = updated - Math.floor(rng.float() * maxAge);
  return { created, updated };
}

/**
 * The same distribution as `recordStamps`, but `updated` never decreases with `index`: a bulk
 * seed then inserts into the `(updated_at, id)` indexes at their end instead of at random
 * pages, which on SQLite is several times faster once an index outgrows the page cache.
 */
export function orderedStamps(rng: Random, now: number, index: number, count: number, maxAge = 400 * DAY): Stamps {
  const updated = now - YEAR + Math.floor(((index + rng.float()) / Math.max(count, 1)) * YEAR);
  const created = updated - Math.floor(rng.float() * maxAge);
  return { created, updated };
}
