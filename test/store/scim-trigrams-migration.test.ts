/**
 * Migration 0045 on PostgreSQL: a role that may not create the pg_trgm extension still migrates;
 * the trigram index is then absent and a `co` filter is answered by a scan, with the same result.
 * Where the extension can be created the index is there.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from '#kysely';
import { type Database, openDatabase } from '../../src/store/database.js';
import { loadMigrations, migrate } from '../../src/store/migrate.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.js';

const trigramIndex = async (database: Database) =>
  (await sql<{ n: string }>`SELECT count(*) AS n FROM pg_indexes WHERE indexname = 'scim_people_fields_trigrams'`.execute(database.db))
    .rows[0]?.n;

if (DIALECTS.includes('postgres')) {
  describe('migration 0045, the trigram index for co [postgres]', () => {
    let test: TestDatabase;
    let database: Database;
    const role = `wsops_no_extension_${randomBytes(4).toString('hex')}`;
    before(async () => {
      test = await createTestDatabase('postgres');
      database = openDatabase(test.url);
    });
    after(async () => {
      await sql.raw(`REASSIGN OWNED BY ${role} TO CURRENT_USER`).execute(database.db);
      await sql.raw(`DROP OWNED BY ${role}`).execute(database.db);
      await sql.raw(`DROP ROLE IF EXISTS ${role}`).execute(database.db);
      await database.close();
      await test.drop();
    });

    it('succeeds without the index where CREATE EXTENSION is refused; a co filter still selects exactly', async () => {
      const all = await loadMigrations('postgres');
      await migrate(database, Object.fromEntries(Object.entries(all).filter(([name]) => name < '0045')));
      await sql
        .raw(`INSERT INTO scim_people_fields (workspace_id, person_id, display_name) VALUES
          ('wsp_t', 'per_1', 'fifty 50% off'), ('wsp_t', 'per_2', 'fifty 50x off'), ('wsp_t', 'per_3', NULL)`)
        .execute(database.db);
      const { rows } = await sql<{ name: string }>`SELECT current_database() AS name`.execute(database.db);
      // A role that owns the table (it may index it) but may not create anything in the database (nor an extension).
      await sql.raw(`CREATE ROLE ${role} NOLOGIN`).execute(database.db);
      await sql.raw(`REVOKE CREATE ON DATABASE ${rows[0]?.name} FROM PUBLIC`).execute(database.db);
      await sql.raw(`GRANT USAGE, CREATE ON SCHEMA public TO ${role}`).execute(database.db);
      await sql.raw(`ALTER TABLE scim_people_fields OWNER TO ${role}`).execute(database.db);
      await database.db.connection().execute(async (conn) => {
        await sql.raw(`SET ROLE ${role}`).execute(conn);
        await all['0045_scim_people_fields_trigrams']?.up(conn as never);
        await sql`RESET ROLE`.execute(conn);
      });
      assert.equal(Number(await trigramIndex(database)), 0);
      const { rows: matched } = await sql<{ person_id: string }>`SELECT person_id FROM scim_people_fields
        WHERE workspace_id = 'wsp_t' AND display_name LIKE '%50\\%%' ORDER BY person_id`.execute(database.db);
      assert.deepEqual(
        matched.map((r) => r.person_id),
        ['per_1'],
      );
    });

    it('creates the index where the extension can be created', async () => {
      const all = await loadMigrations('postgres');
      await all['0045_scim_people_fields_trigrams']?.up(database.db as never);
      assert.equal(Number(await trigramIndex(database)), 1);
    });
  });
}
