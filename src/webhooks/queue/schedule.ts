/**
 * The attempt schedule of the contract: the delay before each attempt. Four attempts inside
 * nine minutes, twelve in about 21 hours. Up to 10% jitter from the fifth attempt on spreads
 * retries of many endpoints that failed together.
 */
const MIN = 60_000;
export const ATTEMPT_DELAYS_MS: readonly number[] = [
  0,
  1 * MIN,
  3 * MIN,
  5 * MIN,
  30 * MIN,
  60 * MIN,
  120 * MIN,
  180 * MIN,
  180 * MIN,
  240 * MIN,
  240 * MIN,
  210 * MIN,
];
export const MAX_ATTEMPTS = ATTEMPT_DELAYS_MS.length;
export const FAILURES_BEFORE_DISABLE = 20;

/**
 * When the attempt after `attemptsMade` failed attempts is due, or undefined when all twelve
 * are spent. `random` in [0, 1) gives the jitter.
 */
export function nextAttemptAt(attemptsMade: number, previousAttemptAt: number, random: number = Math.random()): number | undefined {
  if (attemptsMade >= MAX_ATTEMPTS) return undefined;
  const delay = ATTEMPT_DELAYS_MS[attemptsMade] as number;
  const jitter = attemptsMade + 1 >= 5 ? Math.floor(delay * 0.1 * random) : 0;
  return previousAttemptAt + delay + jitter;
}
