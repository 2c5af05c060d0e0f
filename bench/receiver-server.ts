/**
 * The local webhook receiver of the benchmarks, in its own process: answers 200 at once (or,
 * under `/slow/<ms>/…`, after that many milliseconds), counts deliveries per path and records
 * event-created → received latency.
 *   node --import tsx bench/receiver-server.ts <port>
 * GET /stats → {count, byPath, p50, p99}; with `?prefix=/b` only paths starting so, with
 * `&from=<ms>&to=<ms>` only events created in [from, to) (epoch ms). POST /reset clears them.
 */
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
let count = 0;
let byPath: Record<string, number> = {};
/** One entry per delivery: its path, its event's creation time and the latency (ms). */
let paths: string[] = [];
let created: number[] = [];
let latencies: number[] = [];

function stats(query: URLSearchParams) {
  const prefix = query.get('prefix') ?? '';
  const from = Number(query.get('from') ?? '-Infinity');
  const to = Number(query.get('to') ?? 'Infinity');
  const picked: number[] = [];
  for (let i = 0; i < latencies.length; i++) {
    const c = created[i] as number;
    if (c >= from && c < to && (paths[i] as string).startsWith(prefix)) picked.push(latencies[i] as number);
  }
  picked.sort((a, b) => a - b);
  const pct = (p: number) => picked[Math.min(picked.length - 1, Math.floor(picked.length * p))] ?? 0;
  return { count, byPath, matched: picked.length, p50: pct(0.5), p99: pct(0.99), max: picked.at(-1) ?? 0 };
}

createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://receiver');
  if (req.method === 'GET' && url.pathname === '/stats') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats(url.searchParams)));
    return;
  }
  if (req.method === 'POST' && url.pathname === '/reset') {
    count = 0;
    byPath = {};
    paths = [];
    created = [];
    latencies = [];
    res.end('{}');
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const received = Date.now();
    // /slow/<ms>/… answers after <ms>; /slow/<min>-<max>/… after a random time in that range.
    const slow = /^\/slow\/(\d+)(?:-(\d+))?/.exec(url.pathname);
    const min = Number(slow?.[1] ?? 0);
    const delay = slow?.[2] ? min + Math.random() * (Number(slow[2]) - min) : min;
    const done = () => {
      count++;
      byPath[url.pathname] = (byPath[url.pathname] ?? 0) + 1;
      const at = /"created":"([^"]+)"/.exec(Buffer.concat(chunks).toString('utf8'));
      if (at?.[1]) {
        const c = Date.parse(at[1]);
        paths.push(url.pathname);
        created.push(c);
        latencies.push(received - c);
      }
      res.writeHead(200).end();
    };
    if (delay > 0) setTimeout(done, delay);
    else done();
  });
}).listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
