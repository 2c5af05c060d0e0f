/** The next updated_at of a record: now, but always after its previous value so sync never misses it. */
export function nextStamp(previous: string | undefined, now: number): string {
  const prev = previous ? Date.parse(previous) : Number.NEGATIVE_INFINITY;
  return new Date(Math.max(now, prev + 1)).toISOString();
}
