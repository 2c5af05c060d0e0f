/**
 * Migration 0043: the people fields SCIM filters compare (scim_people_fields) are filled for the
 * people stored before it, and its triggers keep them current on every insert, update and
 * delete of a person, whatever writes it; other registers' records get no row.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from '#kysely';
import { people } from '../../src/registers/people.js';
import { type Database, openDatabase } from '../../src/store/database.js';
import { loadMigrations, migrate } from '../../src/store/migrate.js';
import { toRow } from '../../src/writes/records.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.js';

const stamp = '2026-01-01T00:00:00.000Z';
const person = (id: string, name: string, managerId: string | null, status = 'ACTIVE') => ({
  id,
  display_name: `${name} Quill`,
  given_name: name,
  family_name: 'Quill',
  work_email: `${name}@Example.com`,
  work_phone: null,
  job_title: 'Engineer',
  team_id: null,
  location_id: 'loc_hq',
  manager_id: managerId,
  status,
  start_date: '2024-01-01',
  end_date: null,
  created_at: stamp,
  updated_at: stamp,
});

for (const dialect of DIALECTS) {
  describe(`migration 0043, the people fields SCIM filters compare [${dialect}]`, () => {
    let test: TestDatabase;
    let database: Database;
    before(async () => {
      test = await createTestDatabase(dialect);
      database = openDatabase(test.url);
    });
    after(async () => {
      await database.close();
      await test.drop();
    });

    const fields = () =>
      database.db
        .selectFrom('scim_people_fields')
        .select(['person_id', 'work_email', 'display_name', 'given_name', 'family_name', 'status', 'manager_id'])
        .orderBy('person_id')
        .execute();
    const insert = async (p: ReturnType<typeof person>) => {
      const { refs: _refs, ...row } = toRow('wsp_m', people, p);
      await database.db
        .insertInto('records')
        .values(row as never)
        .execute();
    };

    it('fills the rows of the people stored before it, then keeps them with every write of a person', async () => {
      const all = await loadMigrations(dialect);
      await migrate(database, Object.fromEntries(Object.entries(all).filter(([name]) => name < '0043')));
      await database.db
        .insertInto('workspaces')
        .values({ id: 'wsp_m', name: 'm', modules: '', created_at: stamp } as never)
        .execute();
      await insert(person('per_boss', 'Ada', null));
      await insert(person('per_a', 'Bo', 'per_boss', 'INACTIVE'));
      await migrate(database, all);
      assert.deepEqual(await fields(), [
        {
          person_id: 'per_a',
          work_email: 'bo@example.com',
          display_name: 'bo quill',
          given_name: 'bo',
          family_name: 'quill',
          status: 'INACTIVE',
          manager_id: 'per_boss',
        },
        {
          person_id: 'per_boss',
          work_email: 'ada@example.com',
          display_name: 'ada quill',
          given_name: 'ada',
          family_name: 'quill',
          status: 'ACTIVE',
          manager_id: null,
        },
      ]);

      await insert(person('per_c', 'Cy', 'per_a'));
      const moved = JSON.stringify(person('per_a', 'Bea', null));
      await sql`UPDATE records SET doc = ${moved} WHERE workspace_id = 'wsp_m' AND id = 'per_a'`.execute(database.db);
      await sql`DELETE FROM records WHERE workspace_id = 'wsp_m' AND id = 'per_boss'`.execute(database.db);
      const { refs: _refs, ...location } = toRow('wsp_m', people, person('per_x', 'X', null));
      await database.db
        .insertInto('records')
        .values({ ...location, id: 'loc_x', register: 'locations' } as never)
        .execute();
      assert.deepEqual(
        (await fields()).map((f) => [f.person_id, f.display_name, f.status, f.manager_id]),
        [
          ['per_a', 'bea quill', 'ACTIVE', null],
          ['per_c', 'cy quill', 'ACTIVE', 'per_a'],
        ],
      );
    });
  });
}
