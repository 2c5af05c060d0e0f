/**
 * A mirror in PostgreSQL whose idle session the server ends (a restart, a failover, an
 * `idle_session_timeout`) between two runs of `--watch` carries on: the session is dropped and
 * the next page opens another, instead of the process ending on an unhandled 'error' event.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { MIRROR_REGISTERS, openStore } from '@wsops/client/mirror';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/databases.js';
import { DIALECTS } from './helpers/server.js';

if (DIALECTS.includes('postgres')) {
  describe('wsops-mirror in PostgreSQL when the server ends its idle session', () => {
    let database: TestDatabase | undefined;
    after(async () => {
      await database?.drop();
    });

    it('the mirror keeps its process and reads and writes again through a new session', async () => {
      database = await createTestDatabase('postgres');
      const store = await openStore(database.url);
      const register = MIRROR_REGISTERS[0]!;
      try {
        await store.prepare(MIRROR_REGISTERS);
        await store.saveState(register, { watermark: '2026-11-28T10:00:00.000Z', lastFullAt: null, deletionsSince: null });

        const admin = new pg.Client({ connectionString: database.url });
        await admin.connect();
        try {
          const ended = await admin.query<{ pid: number }>(
            'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
          );
          assert.ok(ended.rows.length > 0, 'the mirror holds an idle session');
          for (const { pid } of ended.rows) await admin.query('SELECT pg_terminate_backend($1, 5000)', [pid]);
        } finally {
          await admin.end();
        }
        // The idle session learns it was ended on its next read of the socket: give the event loop a turn.
        await new Promise((resolve) => setImmediate(resolve));

        assert.equal((await store.state(register)).watermark, '2026-11-28T10:00:00.000Z');
        await store.saveState(register, { watermark: '2026-11-28T11:00:00.000Z', lastFullAt: null, deletionsSince: null });
        assert.equal((await store.state(register)).watermark, '2026-11-28T11:00:00.000Z');
      } finally {
        await store.close();
      }
    });
  });
}
