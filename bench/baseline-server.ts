/**
 * The naive baseline of benchmark (a): a bare Fastify handler over a conventional typed table,
 * the same keyset query with better-sqlite3, rows turned into objects and JSON.stringify. No
 * auth, no scopes, no signing, no validation.
 *   node --import tsx bench/baseline-server.ts <sqlite-file> <port>
 */
import Database from 'better-sqlite3';
import Fastify from 'fastify';

const [file, port] = process.argv.slice(2) as [string, string];
const db = new Database(file, { readonly: true });
db.pragma('cache_size = -65536');
const first = db.prepare('SELECT * FROM baseline_assets ORDER BY updated_at, id LIMIT ?');
const next = db.prepare('SELECT * FROM baseline_assets WHERE (updated_at, id) > (?, ?) ORDER BY updated_at, id LIMIT ?');

const app = Fastify();
app.get('/assets', async (request, reply) => {
  const q = request.query as { limit?: string; cursor?: string };
  const limit = Math.min(1000, Number(q.limit ?? 100));
  let rows: Record<string, unknown>[];
  if (q.cursor) {
    const [u, i] = Buffer.from(q.cursor, 'base64url').toString().split('|');
    rows = next.all(u, i, limit + 1) as Record<string, unknown>[];
  } else {
    rows = first.all(limit + 1) as Record<string, unknown>[];
  }
  const hasMore = rows.length > limit;
  if (hasMore) rows.pop();
  for (const r of rows) r.custody = JSON.parse(r.custody as string);
  const last = rows[rows.length - 1];
  const cursor = hasMore && last ? Buffer.from(`${last.updated_at}|${last.id}`).toString('base64url') : null;
  reply.type('application/json');
  return JSON.stringify({ data: rows, has_more: hasMore, next_cursor: cursor });
});
await app.listen({ port: Number(port), host: '127.0.0.1' });
process.stdout.write('ready\n');
