/**
 * The local webhook receiver of the benchmarks, in its own process: answers 200 at once,
 * counts deliveries per path and records event-created → received latency.
 *   node --import tsx bench/receiver-server.ts <port>
 * GET /stats → {count, byPath, p50, p99}; POST /reset clears them.
 */
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
let count = 0;
let byPath: Record<string, number> = {};
let latencies: number[] = [];

createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    const sorted = [...latencies].sort((a, b) => a - b);
    const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ count, byPath, p50: pct(0.5), p99: pct(0.99) }));
    return;
  }
  if (req.method === 'POST' && req.url === '/reset') {
    count = 0;
    byPath = {};
    latencies = [];
    res.end('{}');
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    count++;
    const path = req.url ?? '/';
    byPath[path] = (byPath[path] ?? 0) + 1;
    const created = /"created":"([^"]+)"/.exec(Buffer.concat(chunks).toString('utf8'));
    if (created?.[1]) latencies.push(Date.now() - Date.parse(created[1]));
    res.writeHead(200).end();
  });
}).listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
