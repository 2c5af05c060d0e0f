import { type Kysely, sql } from '#kysely';
import type { Dialect } from '../database.js';

/** The people fields a SCIM filter compares, each with an expression index (doc-fields.ts writes the same expressions). */
const PEOPLE_FIELDS = ['work_email', 'display_name', 'given_name', 'family_name'] as const;

/**
 * SCIM's guarantees move into the database (docs/guarantees.md):
 * - `scim_people.user_name` is the User's userName, and `user_name_key` (lower-cased) is unique
 *   per workspace: two processes creating one userName at once make one person, the second
 *   insert failing on the index inside its transaction (the in-process queue it replaces held in
 *   one process only). Rows written before take the person's work email, which was the userName;
 *   a second row of one address (possible across processes before) keeps no key.
 * - SCIM lists and filters run in the database: expression indexes over the people fields they
 *   compare (equality and prefix), and the SCIM attributes kept beside a person.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await sql`ALTER TABLE scim_people ADD COLUMN user_name text`.execute(db);
  await sql`ALTER TABLE scim_people ADD COLUMN user_name_key text`.execute(db);
  const { rows } = await sql<{ workspace_id: string; person_id: string; doc: string }>`
    SELECT s.workspace_id, s.person_id, r.doc FROM scim_people s
    JOIN records r ON r.workspace_id = s.workspace_id AND r.id = s.person_id ORDER BY s.workspace_id, s.person_id`.execute(db);
  const taken = new Set<string>();
  for (const row of rows) {
    const email = (JSON.parse(row.doc) as { work_email?: unknown }).work_email;
    if (typeof email !== 'string') continue;
    const key = email.toLowerCase();
    const claimed = !taken.has(`${row.workspace_id} ${key}`);
    taken.add(`${row.workspace_id} ${key}`);
    await sql`UPDATE scim_people SET user_name = ${email}, user_name_key = ${claimed ? key : null}
      WHERE workspace_id = ${row.workspace_id} AND person_id = ${row.person_id}`.execute(db);
  }
  const ops = dialect === 'postgres' ? ' text_pattern_ops' : '';
  await sql.raw(`CREATE UNIQUE INDEX scim_people_user_name ON scim_people (workspace_id, user_name_key${ops})`).execute(db);
  for (const column of ['external_id', 'employee_number']) {
    await sql.raw(`CREATE INDEX scim_people_${column} ON scim_people (workspace_id, ${column}${ops})`).execute(db);
  }
  // The people SCIM no longer sees (a DELETE kept them) are excluded from every list: a few rows, read by their own index.
  await sql`CREATE INDEX scim_people_deleted ON scim_people (workspace_id, person_id) WHERE deleted_at IS NOT NULL`.execute(db);
  // A list pages in id order: the people's ids alone, so a deep page skips index entries, not documents.
  await sql`CREATE INDEX records_people_id ON records (workspace_id, id) WHERE register = 'people'`.execute(db);
  for (const field of PEOPLE_FIELDS) {
    const expr = dialect === 'postgres' ? `lower((doc)::json ->> '${field}')` : `lower(json_extract(doc, '$.${field}'))`;
    await sql.raw(`CREATE INDEX records_people_${field} ON records (workspace_id, ${expr}${ops}) WHERE register = 'people'`).execute(db);
  }
  // SQLite plans without statistics until ANALYZE: without them it walks every person of a
  // workspace rather than look up the few a filter's index names. A sampled ANALYZE is quick.
  if (dialect === 'sqlite') {
    await sql`PRAGMA analysis_limit = 1000`.execute(db);
    await sql`ANALYZE`.execute(db);
  }
}
