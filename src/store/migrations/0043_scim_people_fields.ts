import { type Kysely, sql } from '#kysely';
import type { Dialect } from '../database.js';

/**
 * What a SCIM filter compares, one short row per person (`scim_people_fields`), so that a filter
 * no index serves (`co`, `ew`, `pr`, `active`, `not`) reads these rows instead of parsing every
 * person's JSON document and probing its SCIM link: issue 56, docs/adr/0054-scim-reads.md.
 * - From the person's record: the work email and names, lower-cased by the database's own
 *   lower() as the filters compare them (the expression indexes of 0037 do the same), the
 *   status and the manager. Triggers on `records` keep them in the transaction of every write of
 *   a person, whoever writes it (SCIM, /api/v1, an import, the seed, a copy).
 * - From its SCIM link (`scim_people`): the userName as filters compare it (the link's key, else
 *   the work email), externalId, employeeNumber and a SCIM DELETE's mark. Triggers on
 *   `scim_people` keep them; a person's row reads its link when it is written, whichever of the
 *   two is written first.
 * A table of its own, not columns of scim_people: that one holds a row only for the people SCIM
 * linked, and its row is the link; this one is only read, never the source of a rule.
 */
const FIELDS = ['work_email', 'display_name', 'given_name', 'family_name'] as const;
const LINK = ['external_id', 'employee_number', 'deleted_at'] as const;
const COLUMNS = ['workspace_id', 'person_id', ...FIELDS, 'status', 'manager_id', 'user_name', ...LINK];
const UPDATES = COLUMNS.slice(2)
  .map((c) => `${c} = excluded.${c}`)
  .join(', ');

/** The row of the record `row` joined to its link `c` (LEFT JOIN scim_people c). */
function values(dialect: Dialect, row: string): string {
  const text = (field: string) =>
    dialect === 'postgres' ? `((${row}.doc)::json ->> '${field}')` : `json_extract(${row}.doc, '$.${field}')`;
  return [
    `${row}.workspace_id`,
    `${row}.id`,
    ...FIELDS.map((f) => `lower(${text(f)})`),
    text('status'),
    text('manager_id'),
    `coalesce(c.user_name_key, lower(${text('work_email')}))`,
    ...LINK.map((c) => `c.${c}`),
  ].join(', ');
}

const linked = (row: string) => `LEFT JOIN scim_people c ON c.workspace_id = ${row}.workspace_id AND c.person_id = ${row}.id`;

/** The link columns of a person's row set from the scim_people row `link` (null: no link). */
function fromLink(link: string | null): string {
  const of = (c: string) => (link ? `${link}.${c}` : 'NULL');
  return `user_name = coalesce(${of('user_name_key')}, work_email), ${LINK.map((c) => `${c} = ${of(c)}`).join(', ')}`;
}

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await sql`CREATE TABLE scim_people_fields (
    workspace_id text NOT NULL,
    person_id text NOT NULL,
    work_email text,
    display_name text,
    given_name text,
    family_name text,
    status text,
    manager_id text,
    user_name text,
    external_id text,
    employee_number text,
    deleted_at text,
    PRIMARY KEY (workspace_id, person_id)
  )${sql.raw(dialect === 'sqlite' ? ' WITHOUT ROWID' : '')}`.execute(db);
  const insert = `INSERT INTO scim_people_fields (${COLUMNS.join(', ')})`;
  await sql.raw(`${insert} SELECT ${values(dialect, 'r')} FROM records r ${linked('r')} WHERE r.register = 'people'`).execute(db);
  const onConflict = `ON CONFLICT (workspace_id, person_id) DO UPDATE SET ${UPDATES}`;
  const ofLink = (link: string) => `WHERE workspace_id = ${link}.workspace_id AND person_id = ${link}.person_id`;
  if (dialect === 'sqlite') {
    // Row triggers that fire for people only: other registers' writes pay nothing.
    const one = `${insert} SELECT ${values(dialect, 'new')} FROM (SELECT 1) ${linked('new')} WHERE true ${onConflict}`;
    await sql
      .raw(`CREATE TRIGGER records_scim_fields_ai AFTER INSERT ON records WHEN new.register = 'people' BEGIN ${one}; END`)
      .execute(db);
    await sql
      .raw(`CREATE TRIGGER records_scim_fields_au AFTER UPDATE OF doc ON records WHEN new.register = 'people' AND old.doc IS NOT new.doc
        BEGIN ${one}; END`)
      .execute(db);
    await sql`CREATE TRIGGER records_scim_fields_ad AFTER DELETE ON records WHEN old.register = 'people' BEGIN
      DELETE FROM scim_people_fields WHERE workspace_id = old.workspace_id AND person_id = old.id; END`.execute(db);
    for (const [name, event] of [
      ['ai', 'INSERT'],
      ['au', 'UPDATE'],
    ]) {
      await sql
        .raw(`CREATE TRIGGER scim_people_fields_${name} AFTER ${event} ON scim_people BEGIN
          UPDATE scim_people_fields SET ${fromLink('new')} ${ofLink('new')}; END`)
        .execute(db);
    }
    await sql
      .raw(`CREATE TRIGGER scim_people_fields_ad AFTER DELETE ON scim_people BEGIN
        UPDATE scim_people_fields SET ${fromLink(null)} ${ofLink('old')}; END`)
      .execute(db);
    await sql`ANALYZE scim_people_fields`.execute(db);
    return;
  }
  // A scan of these rows is one workspace's SCIM read: one backend, not parallel workers taken
  // from every other workspace's queries.
  await sql`ALTER TABLE scim_people_fields SET (parallel_workers = 0)`.execute(db);
  // Statement triggers over the transition tables, as the index of references (0027): an import's
  // statement of a thousand people is one INSERT here, not a thousand calls.
  await sql
    .raw(`CREATE FUNCTION records_scim_fields_written() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        ${insert} SELECT ${values(dialect, 'n')} FROM new_rows n ${linked('n')} WHERE n.register = 'people' ${onConflict};
        RETURN NULL;
      END $$`)
    .execute(db);
  await sql`CREATE TRIGGER records_scim_fields_ai AFTER INSERT ON records REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION records_scim_fields_written()`.execute(db);
  await sql`CREATE TRIGGER records_scim_fields_au AFTER UPDATE ON records REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION records_scim_fields_written()`.execute(db);
  await sql`CREATE FUNCTION records_scim_fields_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM scim_people_fields f USING old_rows o
        WHERE o.register = 'people' AND f.workspace_id = o.workspace_id AND f.person_id = o.id;
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER records_scim_fields_ad AFTER DELETE ON records REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION records_scim_fields_deleted()`.execute(db);
  // A link is written one row at a time (a SCIM write): a row trigger.
  await sql
    .raw(`CREATE FUNCTION scim_people_fields_linked() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' THEN
          UPDATE scim_people_fields SET ${fromLink(null)} ${ofLink('OLD')};
        ELSE
          UPDATE scim_people_fields SET ${fromLink('NEW')} ${ofLink('NEW')};
        END IF;
        RETURN NULL;
      END $$`)
    .execute(db);
  await sql`CREATE TRIGGER scim_people_fields_linked AFTER INSERT OR UPDATE OR DELETE ON scim_people
    FOR EACH ROW EXECUTE FUNCTION scim_people_fields_linked()`.execute(db);
}
