/**
 * Preloaded by the console bench into every server it starts for the counting comparison
 * (`node --import tsx --import ./bench/without-usage-count.ts bin/wsops serve`), so both
 * variants load the code the same way. With WSOPS_BENCH_COUNTING=off it switches the per-key
 * request counter off, so benchmark (a) can be measured with and without it. Never used by
 * the product. bin/wsops runs the compiled dist/, so the patch goes to that module (the one the
 * server loads), not to the source.
 */
import type { UsageCounter as Counter } from '../src/keys/usage.js';

const compiled = '../dist/keys/usage.js';
const { UsageCounter } = (await import(compiled)) as { UsageCounter: typeof Counter };
if (process.env.WSOPS_BENCH_COUNTING === 'off') UsageCounter.prototype.count = () => {};
