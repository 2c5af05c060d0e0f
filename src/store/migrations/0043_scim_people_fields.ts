import { type Kysely, sql } from '#kysely';
import type { Dialect } from '../database.js';

/**
 * The people fields a SCIM filter compares, one narrow row per person (`scim_people_fields`),
 * kept by triggers on `records` in the transaction of every write of a person, whoever writes it
 * (SCIM, /api/v1, an import, the seed, a copy). A filter no index serves (`co`, `ew`, `pr`,
 * `active`, `not`) then reads these short rows instead of parsing every person's JSON document:
 * issue 56, docs/adr/0054-scim-reads.md. The names and emails are stored lower-cased by the
 * database's own lower(), as the filters compare them (the expression indexes of 0037 do the same).
 * A table of its own, not columns of scim_people: that one holds a row only for the people SCIM
 * linked, and its row is the link.
 */
const FIELDS = ['work_email', 'display_name', 'given_name', 'family_name'] as const;
const COLUMNS = `workspace_id, person_id, ${FIELDS.join(', ')}, status, manager_id`;
const UPDATES = [...FIELDS, 'status', 'manager_id'].map((c) => `${c} = excluded.${c}`).join(', ');

function values(dialect: Dialect, row: string): string {
  const text = (field: string) =>
    dialect === 'postgres' ? `((${row}.doc)::json ->> '${field}')` : `json_extract(${row}.doc, '$.${field}')`;
  return [`${row}.workspace_id`, `${row}.id`, ...FIELDS.map((f) => `lower(${text(f)})`), text('status'), text('manager_id')].join(', ');
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
    PRIMARY KEY (workspace_id, person_id)
  )${sql.raw(dialect === 'sqlite' ? ' WITHOUT ROWID' : '')}`.execute(db);
  await sql
    .raw(`INSERT INTO scim_people_fields (${COLUMNS}) SELECT ${values(dialect, 'r')} FROM records r WHERE r.register = 'people'`)
    .execute(db);
  const onConflict = `ON CONFLICT (workspace_id, person_id) DO UPDATE SET ${UPDATES}`;
  if (dialect === 'sqlite') {
    // Row triggers that fire for people only: other registers' writes pay nothing.
    const one = `INSERT INTO scim_people_fields (${COLUMNS}) VALUES (${values(dialect, 'new')}) ${onConflict}`;
    await sql
      .raw(`CREATE TRIGGER records_scim_fields_ai AFTER INSERT ON records WHEN new.register = 'people' BEGIN ${one}; END`)
      .execute(db);
    await sql
      .raw(`CREATE TRIGGER records_scim_fields_au AFTER UPDATE OF doc ON records WHEN new.register = 'people' AND old.doc IS NOT new.doc
        BEGIN ${one}; END`)
      .execute(db);
    await sql`CREATE TRIGGER records_scim_fields_ad AFTER DELETE ON records WHEN old.register = 'people' BEGIN
      DELETE FROM scim_people_fields WHERE workspace_id = old.workspace_id AND person_id = old.id; END`.execute(db);
    await sql`ANALYZE scim_people_fields`.execute(db);
    return;
  }
  // Statement triggers over the transition tables, as the index of references (0027): an import's
  // statement of a thousand people is one INSERT here, not a thousand calls.
  await sql
    .raw(`CREATE FUNCTION records_scim_fields_written() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO scim_people_fields (${COLUMNS}) SELECT ${values(dialect, 'n')} FROM new_rows n WHERE n.register = 'people'
          ${onConflict};
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
}
