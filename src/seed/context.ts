import { Directory } from './directory.js';
import { KeyedRandom, Random } from './random.js';
import { orderedStamps, recordStamps, type Stamps } from './time.js';
import type { SeedWriter } from './writer.js';

/**
 * What every generator needs: the clock, keyed randomness for ids and plans, the directory of
 * references, and the writer. One context per seeding run; `namespace` separates runs that add
 * to the same workspace (the full seed, each bulk seed) so their ids never collide.
 */
export interface SeedContext {
  readonly workspaceId: string;
  readonly now: number;
  readonly keys: KeyedRandom;
  readonly dir: Directory;
  readonly writer: SeedWriter;
  /** Email domain of the workspace's people. */
  readonly domain: string;
  /** An independent content stream per label (usually a register), stable across runs. */
  stream(label: string): Random;
  /** `created`/`updated` of record `index` of the register being generated. */
  stamps(rng: Random, index: number, maxAge?: number): Stamps;
  /** Index of the next task: tasks are made by several generators and share one id sequence. */
  nextTaskIndex: number;
}

export interface ContextInput {
  seed: string;
  workspaceId: string;
  namespace: string;
  now: number;
  writer: SeedWriter;
  domain: string;
  dir?: Directory;
  /**
   * For bulk seeds of this many records: ids and `updated_at` grow with the index (see
   * `KeyedRandom.id` and `orderedStamps`), so SQLite appends to its indexes. Unset: random
   * ids and independent draws, so no record's id or age depends on its position.
   */
  orderedCount?: number;
}

export function createContext(input: ContextInput): SeedContext {
  const base = `${input.seed}:${input.workspaceId}:${input.namespace}`;
  return {
    workspaceId: input.workspaceId,
    now: input.now,
    keys: new KeyedRandom(`${base}:keys`, input.orderedCount !== undefined),
    dir: input.dir ?? new Directory(),
    writer: input.writer,
    domain: input.domain,
    stream: (label) => Random.from(`${base}:${label}`),
    stamps: (rng, index, maxAge) =>
      input.orderedCount === undefined
        ? recordStamps(rng, input.now, maxAge)
        : orderedStamps(rng, input.now, index, input.orderedCount, maxAge),
    nextTaskIndex: 0,
  };
}
