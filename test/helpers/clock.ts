/** A clock the test moves by hand: no test ever sleeps for real. */
export interface TestClock {
  (): number;
  set(ms: number): void;
  advance(ms: number): void;
}

export function testClock(start = Date.parse('2026-11-22T08:00:00.000Z')): TestClock {
  let now = start;
  const clock = (() => now) as TestClock;
  clock.set = (ms) => {
    now = ms;
  };
  clock.advance = (ms) => {
    now += ms;
  };
  return clock;
}
