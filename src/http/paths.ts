/**
 * Whether a request URL's path is `prefix` or lies under it, the query ignored: `/api/v1`,
 * `/api/v1/assets` and `/api/v1?x` are under `/api/v1`; `/api/v10` is not. `prefix` has no
 * trailing slash. It runs on every request, so it reads characters rather than splitting.
 */
export function pathUnder(url: string, prefix: string): boolean {
  if (!url.startsWith(prefix)) return false;
  const next = url.charCodeAt(prefix.length);
  return Number.isNaN(next) || next === 0x2f /* / */ || next === 0x3f /* ? */;
}
