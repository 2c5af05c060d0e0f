/**
 * Load generator, run in its own process so it does not share a core's event loop with the
 * server: autocannon over a list of URLs (real cursors collected from a walk).
 *   node --import tsx bench/load.ts <spec.json: {url, headers, paths, connections, duration, overallRate?}>
 * Prints one JSON line: requests/s, latency percentiles, errors.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import autocannon from 'autocannon';

// autocannon 8 appends every chunk of every response body to a string, which decodes it as
// UTF-8, and reads that string only for `expectBody`, `verifyBody` or `onResponse`, none of
// which is used here. JSON is ASCII and decodes on V8's fast path; compressed bytes do not: at
// 1,500 pages/s the load generator spent 370 µs of CPU per br page against 146 µs per identity
// page, CPU taken from the server on this 2-core machine (docs/benchmarks.md, "the load
// generator's share"). Bodies are still counted (bytes and throughput), just not kept.
const PipelinedRequestsQueue = createRequire(import.meta.url)('autocannon/lib/pipelinedRequestsQueue.js') as {
  prototype: { addBody(data: Buffer): void };
};
PipelinedRequestsQueue.prototype.addBody = () => {};

const spec = JSON.parse(readFileSync(process.argv[2] as string, 'utf8')) as {
  url: string;
  headers: Record<string, string>;
  paths: string[];
  connections: number;
  duration: number;
  /** Requests per second across all connections (the soak's fixed rate); unset: as fast as possible. */
  overallRate?: number;
  /** This many requests, then stop (instead of `duration`); the answer then also gives p95. */
  amount?: number;
};
let i = 0;
// autocannon's percentiles skip p95: each response's time is kept when the run is counted in requests.
const times: number[] = [];
const options: autocannon.Options = {
  url: spec.url,
  connections: spec.connections,
  ...(spec.amount ? { amount: spec.amount } : { duration: spec.duration }),
  ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
  headers: spec.headers,
  requests: [
    {
      setupRequest: (req) => {
        req.path = spec.paths[i++ % spec.paths.length] as string;
        return req;
      },
    },
  ],
};
const result = await new Promise<autocannon.Result>((resolve, reject) => {
  const instance = autocannon(options, (err, r) => (err ? reject(err) : resolve(r)));
  if (spec.amount) instance.on('response', (_client, _status, _bytes, ms) => times.push(ms));
});
times.sort((a, b) => a - b);
process.stdout.write(
  `${JSON.stringify({
    // A run of so many requests ends inside a second: its rate is its count over its time.
    rps: spec.amount ? result.requests.total / result.duration : result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ...(spec.amount ? { p95: times[Math.min(times.length - 1, Math.floor(times.length * 0.95))] ?? 0 } : {}),
    errors: result.errors,
    non2xx: result.non2xx,
    total: result.requests.total,
  })}\n`,
);
