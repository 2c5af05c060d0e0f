import type { Random } from './random.js';

/**
 * Makes every enumeration value appear early: the first records of a register take each value
 * not yet used, in the order given, before falling back to weighted random choice. So scale 1
 * already has a match for every filter value, and larger scales keep realistic proportions.
 */
export class Coverage {
  private readonly seen = new Map<string, Set<string>>();

  pick<T extends string>(rng: Random, key: string, values: readonly T[], weights?: readonly number[]): T {
    let used = this.seen.get(key);
    if (!used) {
      used = new Set();
      this.seen.set(key, used);
    }
    for (const v of values) {
      if (!used.has(v)) {
        used.add(v);
        return v;
      }
    }
    return weights ? rng.weighted(values, weights) : rng.pick(values);
  }
}

/** Index-addressed coverage for plans that must be recomputable: value `i` for the first records. */
export function coverByIndex<T>(rng: Random, index: number, values: readonly T[], weights: readonly number[]): T {
  return index < values.length ? (values[index] as T) : rng.weighted(values, weights);
}
