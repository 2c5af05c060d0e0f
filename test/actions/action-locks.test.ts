/**
 * What a domain action locks (ADR 42): the records it reads, not its workspace. An action that
 * waits for one record holds up only actions on that record; two actions on one record still run
 * one after the other (domain-actions.test.ts: concurrent asset.assign of one asset).
 * An action and PUTs of the records it updates, at once, never deadlock: the action locks its
 * records in one order, and a PUT's trigger changes the reference index rows the action's lookup
 * reads without locking them (ADR 42, fourth pass).
 * PostgreSQL only: on SQLite every write transaction holds the database's one write lock.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { sql } from '#kysely';
import { runAction } from '../../src/actions/domain/index.js';
import { putRecord } from '../../src/writes/record-writes.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { Fixtures, register } from './helpers.js';

for (const dialect of DIALECTS) {
  describe(`what a domain action locks [${dialect}]`, { skip: dialect === 'sqlite' && 'SQLite: one writer at a time by design' }, () => {
    let h: Harness;
    before(async () => {
      h = await createHarness(dialect);
    });
    after(() => h?.close());

    /** Sessions of this database waiting for a lock now. */
    const waiting = async () =>
      Number(
        (
          await sql<{ n: string }>`SELECT count(*) AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(h.services.database.db)
        ).rows[0]?.n,
      );
    const turn = () => new Promise((r) => setImmediate(r));

    it('PUTs of the open transition that asset.assign adds to, at the same time as the actions: every write finishes, none on a deadlock', async () => {
      const fx = await Fixtures.create(h);
      const person = await fx.activePerson();
      const base = await fx.first('transitions', (t) => t.kind === 'OFFBOARDING' && t.status === 'DRAFT');
      const transition = await fx.clone('transitions', base, { person_id: person.id, held_asset_ids: [], held_system_ids: [] });
      const assets = (await fx.all('assets')).filter((a) => a.status === 'AVAILABLE').slice(0, 8);
      assert.equal(assets.length, 8, 'the demo data has 8 available assets');
      const { id: _id, created_at: _created, updated_at: _updated, ...body } = transition;
      const outcomes = await Promise.allSettled(
        assets.flatMap((a, i) => [
          runAction(h.services, 'asset.assign', fx.ws, { asset: a.id, person: person.id }),
          putRecord(h.services, fx.ws, register('transitions'), transition.id, { ...body, effective_date: `2027-01-${10 + i}` }),
        ]),
      );
      const failures = outcomes.flatMap((o) => (o.status === 'rejected' ? [String(o.reason)] : []));
      assert.deepEqual(failures, [], 'no action and no PUT failed (a deadlock fails one of the two)');
      for (const a of assets) assert.equal((await fx.api('assets', a.id)).assigned_user_id, person.id);
    });

    it('an action waiting for one asset does not hold up an action on another asset of the same workspace', async () => {
      const fx = await Fixtures.create(h);
      const [a, b] = (await fx.all('assets')).filter((x) => x.status === 'AVAILABLE');
      assert.ok(a && b);
      const p = await fx.activePerson();
      const q = await fx.activePerson();
      // Another session (an import, a correction) holds asset A's row.
      const holder = new pg.Client({ connectionString: h.databaseUrl });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT id FROM records WHERE workspace_id = $1 AND id = $2 FOR UPDATE', [fx.ws, a.id]);
        const first = runAction(h.services, 'asset.assign', fx.ws, { asset: a.id, person: p.id });
        while ((await waiting()) < 1) await turn();

        // B's action either finishes, or waits for a lock too (what a workspace lock made it do).
        let settled = false;
        const second = runAction(h.services, 'asset.assign', fx.ws, { asset: b.id, person: q.id }).finally(() => {
          settled = true;
        });
        let blocked = false;
        while (!settled && !blocked) {
          blocked = (await waiting()) >= 2;
          await turn();
        }
        assert.equal(blocked, false, "the action on asset B waited for asset A's action");
        await second;
        assert.equal((await fx.api('assets', b.id)).assigned_user_id, q.id);
        assert.equal((await fx.api('assets', a.id)).status, 'AVAILABLE');

        await holder.query('COMMIT');
        await first;
        assert.equal((await fx.api('assets', a.id)).assigned_user_id, p.id);
      } finally {
        await holder.query('ROLLBACK').catch(() => {});
        await holder.end();
      }
    });
  });
}
