/**
 * The naive baselines' own conventional table `baseline_assets`, built from the seeded records:
 * one typed column per asset field, one index on (updated_at, id), the way a team would model
 * assets without wsops' stored response documents.
 */
import SQLite from 'better-sqlite3';
import pg from 'pg';

/** Asset fields with their PostgreSQL types, in the order the table (and so `SELECT *`) lists them. */
const COLUMNS: readonly [name: string, pgType: string][] = [
  ['id', 'text PRIMARY KEY'],
  ['asset_tag', 'text'],
  ['name', 'text'],
  ['category', 'text'],
  ['status', 'text'],
  ['location_id', 'text'],
  ['assigned_user_id', 'text'],
  ['assigned_at', 'timestamptz'],
  ['expected_return_at', 'timestamptz'],
  ['serial_number', 'text'],
  ['purchase_date', 'date'],
  ['warranty_expires_on', 'date'],
  ['custody', 'jsonb'],
  ['created_at', 'timestamptz'],
  ['updated_at', 'timestamptz'],
];

/** SQLite has no column types to speak of: text everywhere, custody as JSON text the server parses back. */
export function buildSqliteBaselineTable(file: string, workspaceId: string): void {
  const db = new SQLite(file);
  db.exec('DROP TABLE IF EXISTS baseline_assets');
  db.exec(`CREATE TABLE baseline_assets (${COLUMNS.map(([c]) => (c === 'id' ? 'id TEXT PRIMARY KEY' : `${c} TEXT`)).join(', ')})`);
  const fromDoc = COLUMNS.filter(([c]) => c !== 'created_at' && c !== 'updated_at').map(([c]) => `json_extract(doc, '$.${c}')`);
  // json_extract of an array returns its JSON text, which is what the custody column holds.
  db.prepare(
    `INSERT INTO baseline_assets SELECT ${fromDoc.join(', ')}, created_at, updated_at FROM records WHERE workspace_id = ? AND register = 'assets'`,
  ).run(workspaceId);
  db.exec('CREATE INDEX baseline_assets_order ON baseline_assets (updated_at, id)');
  db.close();
}

/** PostgreSQL: typed columns (timestamptz, date, jsonb), vacuumed and analyzed as a maintained table would be. */
export async function buildPostgresBaselineTable(url: string, workspaceId: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('DROP TABLE IF EXISTS baseline_assets');
    await client.query(`CREATE TABLE baseline_assets (${COLUMNS.map(([c, t]) => `${c} ${t}`).join(', ')})`);
    const fromDoc = COLUMNS.filter(([c]) => c !== 'created_at' && c !== 'updated_at').map(([c, t]) => {
      if (c === 'custody') return `d -> 'custody'`;
      const type = t.replace(' PRIMARY KEY', '');
      return type === 'text' ? `d ->> '${c}'` : `(d ->> '${c}')::${type}`;
    });
    await client.query(
      `INSERT INTO baseline_assets
       SELECT ${fromDoc.join(', ')}, created_at::timestamptz, updated_at::timestamptz
       FROM (SELECT doc::jsonb AS d, created_at, updated_at FROM records WHERE workspace_id = $1 AND register = 'assets') r`,
      [workspaceId],
    );
    await client.query('CREATE INDEX baseline_assets_order ON baseline_assets (updated_at, id)');
  } finally {
    await client.end();
  }
  await settleBulkLoad(url, 'baseline_assets');
}

/**
 * After a bulk load on PostgreSQL: the table vacuumed and analyzed, and what the load left dirty
 * written out, as a maintained database would be. Neither autovacuum (which a million inserts
 * set off) nor a checkpoint of the load should land inside a measurement, and the first reads
 * should not be the ones that set every row's hint bits. Both sides get it: wsops' `records`
 * after seeding, the baseline's table after it is built.
 */
export async function settleBulkLoad(url: string, table: 'records' | 'baseline_assets'): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`VACUUM ANALYZE ${table}`);
    await client.query('CHECKPOINT');
  } finally {
    await client.end();
  }
}
