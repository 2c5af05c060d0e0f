/**
 * Migration 0027 on a database that already holds records: every stored record's references
 * (from its register's declaration) land in the reverse index, so a delete after the upgrade
 * finds the referrers written before it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { people } from '../../src/registers/people.js';
import { type Database, openDatabase } from '../../src/store/database.js';
import { loadMigrations, migrate } from '../../src/store/migrate.js';
import { toRow } from '../../src/writes/records.js';
import { storedReferrers } from '../../src/writes/referrers.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.js';

const stamp = '2026-01-01T00:00:00.000Z';
const person = (id: string, managerId: string | null) => ({
  id,
  display_name: 'Ada Quill',
  given_name: 'Ada',
  family_name: 'Quill',
  work_email: 'ada@example.com',
  work_phone: null,
  job_title: 'Engineer',
  team_id: null,
  location_id: 'loc_hq',
  manager_id: managerId,
  status: 'ACTIVE',
  start_date: '2024-01-01',
  end_date: null,
  created_at: stamp,
  updated_at: stamp,
});

for (const dialect of DIALECTS) {
  describe(`migration 0027, the index of references [${dialect}]`, () => {
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

    it('indexes the references of the records stored before it', async () => {
      const all = await loadMigrations(dialect);
      await migrate(database, Object.fromEntries(Object.entries(all).filter(([name]) => name < '0027')));
      const db = database.db;
      await db
        .insertInto('workspaces')
        .values({ id: 'wsp_m', name: 'm', modules: '', created_at: stamp } as never)
        .execute();
      for (const [id, manager] of [
        ['per_boss', null],
        ['per_a', 'per_boss'],
        ['per_b', 'per_boss'],
      ] as const) {
        const { refs: _refs, ...row } = toRow('wsp_m', people, person(id, manager));
        await db
          .insertInto('records')
          .values(row as never)
          .execute();
      }
      await migrate(database, all);
      const index = await db
        .selectFrom('record_refs')
        .select(['target_id', 'source_id'])
        .orderBy('target_id')
        .orderBy('source_id')
        .execute();
      assert.deepEqual(index, [
        { target_id: 'loc_hq', source_id: 'per_a' },
        { target_id: 'loc_hq', source_id: 'per_b' },
        { target_id: 'loc_hq', source_id: 'per_boss' },
        { target_id: 'per_boss', source_id: 'per_a' },
        { target_id: 'per_boss', source_id: 'per_b' },
      ]);
      const found = await database.engine.writeRecords((batch) => storedReferrers(batch, 'wsp_m', ['per_boss']));
      assert.deepEqual(
        [...(found.get('per_boss') ?? [])].sort((a, b) => a.id.localeCompare(b.id)),
        [
          { register: 'people', field: 'manager_id', id: 'per_a' },
          { register: 'people', field: 'manager_id', id: 'per_b' },
        ],
      );
    });
  });
}
