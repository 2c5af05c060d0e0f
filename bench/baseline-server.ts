/**
 * The naive baselines, one process per dialect:
 * - `GET /assets`: benchmark (a)'s baseline, a bare Fastify handler over the conventional typed
 *   table `baseline_assets` (bench/baseline-tables.ts), the same keyset query with
 *   better-sqlite3 or with a `pg` Pool sized like wsops' (10), rows turned into objects and
 *   JSON.stringify. No auth, no scopes, no signing, no validation.
 * - `GET /bare`: a bare Fastify route returning a fixed JSON object (the bench passes one the
 *   size of wsops' `/api/v1/scopes` answer), what `/scopes` is measured against.
 *   node --import tsx bench/baseline-server.ts <sqlite:FILE | postgres://URL> <port> <bare-object-json>
 */
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import pg from 'pg';

type Row = Record<string, unknown>;
/** Rows of one page plus one, after `after` = [updated_at, id] when given. */
type PageQuery = (after: [string, string] | undefined, limit: number) => Row[] | Promise<Row[]>;

const [databaseUrl, port, bareJson] = process.argv.slice(2) as [string, string, string];

function sqlitePages(file: string): PageQuery {
  const db = new Database(file, { readonly: true });
  db.pragma('cache_size = -65536');
  const first = db.prepare('SELECT * FROM baseline_assets ORDER BY updated_at, id LIMIT ?');
  const next = db.prepare('SELECT * FROM baseline_assets WHERE (updated_at, id) > (?, ?) ORDER BY updated_at, id LIMIT ?');
  return (after, limit) => {
    const rows = (after ? next.all(after[0], after[1], limit) : first.all(limit)) as Row[];
    for (const r of rows) r.custody = JSON.parse(r.custody as string);
    return rows;
  };
}

function postgresPages(url: string): PageQuery {
  // A date column comes back as 'YYYY-MM-DD' (the usual override of pg's local-midnight Date);
  // timestamptz comes back as a Date, which JSON.stringify writes as ISO 8601 with milliseconds; jsonb arrives parsed.
  pg.types.setTypeParser(pg.types.builtins.DATE, (v) => v);
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  return async (after, limit) => {
    const result = after
      ? await pool.query('SELECT * FROM baseline_assets WHERE (updated_at, id) > ($1, $2) ORDER BY updated_at, id LIMIT $3', [
          after[0],
          after[1],
          limit,
        ])
      : await pool.query('SELECT * FROM baseline_assets ORDER BY updated_at, id LIMIT $1', [limit]);
    return result.rows as Row[];
  };
}

const page = databaseUrl.startsWith('sqlite:') ? sqlitePages(databaseUrl.slice('sqlite:'.length)) : postgresPages(databaseUrl);
const bare = JSON.parse(bareJson) as object;

const app = Fastify();
app.get('/assets', async (request, reply) => {
  const q = request.query as { limit?: string; cursor?: string };
  const limit = Math.min(1000, Number(q.limit ?? 100));
  const after = q.cursor ? (Buffer.from(q.cursor, 'base64url').toString().split('|') as [string, string]) : undefined;
  const rows = await page(after, limit + 1);
  const hasMore = rows.length > limit;
  if (hasMore) rows.pop();
  const last = rows[rows.length - 1];
  const lastUpdated = last?.updated_at instanceof Date ? last.updated_at.toISOString() : last?.updated_at;
  const cursor = hasMore && last ? Buffer.from(`${lastUpdated}|${last.id}`).toString('base64url') : null;
  reply.type('application/json');
  return JSON.stringify({ data: rows, has_more: hasMore, next_cursor: cursor });
});
app.get('/bare', async () => bare);
await app.listen({ port: Number(port), host: '127.0.0.1' });
process.stdout.write('ready\n');
