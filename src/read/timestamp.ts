/**
 * Strict ISO 8601 instant parsing: a date, a time and an offset are all required, and the
 * calendar is checked (no 2026-02-30). Returns epoch milliseconds or undefined.
 * The instant itself, after the offset is applied, must lie in 0001-01-01T00:00:00.000Z ..
 * 9999-12-31T23:59:59.999Z: outside it, toISOString() writes a signed six-digit year
 * (`+010000-…`) that sorts before every stored four-digit year.
 */
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)$/;

export const MIN_INSTANT_MS = Date.parse('0001-01-01T00:00:00.000Z');
export const MAX_INSTANT_MS = Date.parse('9999-12-31T23:59:59.999Z');

export function parseInstant(text: string): number | undefined {
  const m = INSTANT.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s = '0', frac = '0', offset = 'Z'] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const ms = Number(frac.padEnd(3, '0').slice(0, 3));
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0..99 to 1900..1999.
  const date = new Date(Date.UTC(2000, 0, 1, hour, minute, second, ms));
  date.setUTCFullYear(year, month - 1, day);
  const local = date.getTime();
  if (date.getUTCDate() !== day) return undefined;
  let offsetMinutes = 0;
  if (offset !== 'Z' && offset !== 'z') {
    const sign = offset.startsWith('-') ? -1 : 1;
    const digits = offset.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2) || '0');
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = sign * (oh * 60 + om);
  }
  const result = local - offsetMinutes * 60_000;
  if (!Number.isFinite(result) || result < MIN_INSTANT_MS || result > MAX_INSTANT_MS) return undefined;
  return result;
}
