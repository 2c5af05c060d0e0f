/** Time is injected everywhere so tests never sleep: production uses Date.now. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
