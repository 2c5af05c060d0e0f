/**
 * Load generator, run in its own process so it does not share a core's event loop with the
 * server: autocannon over a list of URLs (real cursors collected from a walk).
 *   node --import tsx bench/load.ts <spec.json: {url, headers, paths, connections, duration, overallRate?}>
 * Prints one JSON line: requests/s, latency percentiles, errors.
 */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

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
