/**
 * Migration 0043: what SCIM filters compare (scim_people_fields) is filled for the people stored
 * before it, and its triggers keep it current on every insert, update and delete of a person or
 * of its SCIM link, whatever writes it; other registers' records get no row.
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
  describe(`migration 0043, what SCIM filters compare [${dialect}]`, () => {
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
        .select([
          'person_id',
          'work_email',
          'display_name',
          'given_name',
          'family_name',
          'status',
          'manager_id',
          'user_name',
          'external_id',
          'employee_number',
          'deleted_at',
        ])
        .orderBy('person_id')
        .execute();
    const link = (personId: string, userName: string | null, externalId: string, deletedAt: string | null = null) =>
      database.db
        .insertInto('scim_people')
        .values({
          workspace_id: 'wsp_m',
          person_id: personId,
          user_name: userName,
          user_name_key: userName?.toLowerCase() ?? null,
          external_id: externalId,
          employee_number: `E-${externalId}`,
          deleted_at: deletedAt,
        })
        .execute();
    const insert = async (p: ReturnType<typeof person>) => {
      const { refs: _refs, ...row } = toRow('wsp_m', people, p);
      await database.db
        .insertInto('records')
        .values(row as never)
        .execute();
    };

    it('fills the rows of the people stored before it, then keeps them with every write of a person or of its SCIM link', async () => {
      const all = await loadMigrations(dialect);
      await migrate(database, Object.fromEntries(Object.entries(all).filter(([name]) => name < '0043')));
      await database.db
        .insertInto('workspaces')
        .values({ id: 'wsp_m', name: 'm', modules: '', created_at: stamp } as never)
        .execute();
      await insert(person('per_boss', 'Ada', null));
      await insert(person('per_a', 'Bo', 'per_boss', 'INACTIVE'));
      await link('per_a', 'Bo.Q', 'x1');
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
          user_name: 'bo.q',
          external_id: 'x1',
          employee_number: 'E-x1',
          deleted_at: null,
        },
        {
          person_id: 'per_boss',
          work_email: 'ada@example.com',
          display_name: 'ada quill',
          given_name: 'ada',
          family_name: 'quill',
          status: 'ACTIVE',
          manager_id: null,
          user_name: 'ada@example.com',
          external_id: null,
          employee_number: null,
          deleted_at: null,
        },
      ]);

      await link('per_c', null, 'x3', stamp);
      await insert(person('per_c', 'Cy', 'per_a'));
      await link('per_boss', 'Boss', 'x0');
      const moved = JSON.stringify(person('per_a', 'Bea', null));
      await sql`UPDATE records SET doc = ${moved} WHERE workspace_id = 'wsp_m' AND id = 'per_a'`.execute(database.db);
      await sql`DELETE FROM records WHERE workspace_id = 'wsp_m' AND id = 'per_boss'`.execute(database.db);
      const { refs: _refs, ...location } = toRow('wsp_m', people, person('per_x', 'X', null));
      await database.db
        .insertInto('records')
        .values({ ...location, id: 'loc_x', register: 'locations' } as never)
        .execute();
      const short = async () =>
        (await fields()).map((f) => [f.person_id, f.display_name, f.status, f.manager_id, f.user_name, f.external_id, f.deleted_at]);
      assert.deepEqual(await short(), [
        ['per_a', 'bea quill', 'ACTIVE', null, 'bo.q', 'x1', null],
        ['per_c', 'cy quill', 'ACTIVE', 'per_a', 'cy@example.com', 'x3', stamp],
      ]);
      await sql`UPDATE scim_people SET user_name_key = NULL, deleted_at = ${stamp} WHERE person_id = 'per_a'`.execute(database.db);
      await sql`DELETE FROM scim_people WHERE person_id = 'per_c'`.execute(database.db);
      assert.deepEqual(await short(), [
        ['per_a', 'bea quill', 'ACTIVE', null, 'bea@example.com', 'x1', stamp],
        ['per_c', 'cy quill', 'ACTIVE', 'per_a', 'cy@example.com', null, null],
      ]);
    });
  });
}
