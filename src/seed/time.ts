import type { Random } from './random.js';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
export const YEAR = 365 * DAY;

const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
/** `YYYY-MM-DDT` by day number: a bulk seed formats a few timestamps per record, and
 * `Date#toISOString` is five times slower than reusing the day and formatting the time. */
const dayPrefixes = new Map<number, string>();

function dayPrefix(day: number): string {
  let prefix = dayPrefixes.get(day);
  if (prefix === undefined) {
    prefix = new Date(day * DAY).toISOString().slice(0, 11);
    if (dayPrefixes.size < 50_000) dayPrefixes.set(day, prefix);
  }
  return prefix;
}

/** ISO 8601 UTC with milliseconds (`new Date(ms).toISOString()`), the API's timestamp form. */
export function iso(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0 || ms >= 253_402_300_800_000) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY);
  let rest = ms - day * DAY;
  const h = Math.floor(rest / HOUR);
  rest -= h * HOUR;
  const m = Math.floor(rest / MINUTE);
  rest -= m * MINUTE;
  const s = Math.floor(rest / 1000);
  const milli = rest - s * 1000;
  return `${dayPrefix(day)}${TWO_DIGITS[h]}:${TWO_DIGITS[m]}:${TWO_DIGITS[s]}.${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
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

/** A record written within `window` before `now`, created up to `window` before that. */
export function recentStamps(rng: Random, now: number, window: number): Stamps {
  const updated = now - Math.floor(rng.float() * window);
  return { created: updated - Math.floor(rng.float() * window), updated };
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
