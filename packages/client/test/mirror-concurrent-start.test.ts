/**
 * Two mirrors starting at once on one empty database (two replicas of a deployment, or a
 * restart overlapping the old process) both create the mirror's tables, and neither fails:
 * PostgreSQL's CREATE TABLE IF NOT EXISTS is not safe between sessions (the loser gets a
 * duplicate key on pg_type), so the store serialises its table creation.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { MIRROR_REGISTERS, openStore } from '@wsops/client/mirror';
import type { Dialect } from '../../../src/store/database.js';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/databases.js';
import { DIALECTS } from './helpers/server.js';

for (const dialect of DIALECTS) {
  describe(`wsops-mirror starting twice at once (${dialect})`, () => {
    // Dropped at the end, once every store is closed: DROP DATABASE ... WITH (FORCE) would end their sessions.
    const databases: TestDatabase[] = [];
    after(async () => {
      for (const database of databases) await database.drop();
    });

    it('both mirrors create or find every table on an empty database', async () => {
      // A few fresh databases: one pair does not always collide.
      for (let round = 0; round < 5; round++) {
        const database = await createTestDatabase(dialect as Dialect);
        databases.push(database);
        const stores = await Promise.all([openStore(database.url), openStore(database.url)]);
        try {
          const outcomes = await Promise.allSettled(stores.map((store) => store.prepare(MIRROR_REGISTERS)));
          for (const outcome of outcomes)
            assert.equal(outcome.status, 'fulfilled', `round ${round}: ${outcome.status === 'rejected' ? outcome.reason : ''}`);
          for (const register of MIRROR_REGISTERS) assert.deepEqual(await stores[0]!.records(register), []);
          assert.equal((await stores[1]!.state(MIRROR_REGISTERS[0]!)).watermark, null);
        } finally {
          for (const store of stores) await store.close();
        }
      }
    });
  });
}
