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
};
let i = 0;
const result = await autocannon({
  url: spec.url,
  connections: spec.connections,
  duration: spec.duration,
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
});
process.stdout.write(
  `${JSON.stringify({
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
    total: result.requests.total,
  })}\n`,
);
