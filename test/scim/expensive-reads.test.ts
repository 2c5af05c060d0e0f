/**
 * A workspace's SCIM lists whose filter no index serves run one at a time in a process, with a
 * few waiting: more are refused rather than queued without end, and other workspaces' reads never
 * wait behind them (src/scim/one-per-key.ts, docs/scim.md).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OnePerKey } from '../../src/scim/one-per-key.js';
import { seedRegister } from '../../src/seed/seed.js';
import { DIALECTS } from '../helpers/databases.js';
import { type ScimServer, startScimServer } from './helpers.js';

/** A piece of work that runs until released, and says when it started. */
function held() {
  let release!: () => void;
  let started = false;
  const done = new Promise<void>((r) => {
    release = r;
  });
  return {
    work: async () => {
      started = true;
      await done;
      return 'read';
    },
    release: () => release(),
    started: () => started,
  };
}

describe('expensive SCIM reads: one at a time per workspace', () => {
  it('runs one piece of a workspace at a time, in arrival order; another workspace runs beside it', async () => {
    const budget = new OnePerKey(4);
    const [a1, a2, b1] = [held(), held(), held()];
    const ra1 = budget.run('wsp_a', a1.work);
    const ra2 = budget.run('wsp_a', a2.work);
    const rb1 = budget.run('wsp_b', b1.work);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual([a1.started(), a2.started(), b1.started()], [true, false, true]);
    a1.release();
    assert.equal(await ra1, 'read');
    await new Promise((r) => setImmediate(r));
    assert.equal(a2.started(), true, 'the second starts once the first is done');
    a2.release();
    b1.release();
    assert.deepEqual(await Promise.all([ra2, rb1]), ['read', 'read']);
  });

  it('refuses a piece (undefined, nothing run) while the one running and four waiting fill the workspace budget; a failure frees its place', async () => {
    const budget = new OnePerKey(4);
    const pieces = Array.from({ length: 5 }, held);
    const running = pieces.map((p) => budget.run('wsp_a', p.work));
    const refused = held();
    assert.equal(budget.run('wsp_a', refused.work), undefined);
    assert.ok(
      budget.run('wsp_b', async () => 'other'),
      'another workspace is not refused',
    );
    for (const p of pieces) p.release();
    await Promise.all(running);
    const failing = budget.run('wsp_a', async () => {
      throw new Error('database gone');
    });
    await assert.rejects(failing as Promise<unknown>, /database gone/);
    assert.equal(await budget.run('wsp_a', async () => 'again'), 'again');
    assert.equal(refused.started(), false);
  });
});

for (const dialect of DIALECTS) {
  describe(`a filter no index serves, read in slices [${dialect}]`, () => {
    let s: ScimServer;
    before(async () => {
      s = await startScimServer(dialect);
      // More people than one slice of SQLite's scan holds (scanSliceRows), so there the count and pages cross slices.
      await seedRegister(s.h.services, s.ws, 'people', 1300, { seed: 'slices', now: s.h.clock() });
    });
    after(async () => s?.close());

    it('counts and pages exactly what the filter selects, across slices, in id order', async () => {
      const rows = await s.h.services.database.db
        .selectFrom('records')
        .select(['id', 'doc'])
        .where('workspace_id', '=', s.ws)
        .where('register', '=', 'people')
        .orderBy('id')
        .execute();
      const expected = rows.filter((r) => String(JSON.parse(r.doc).display_name).toLowerCase().includes('a')).map((r) => r.id);
      assert.ok(expected.length > 500, `the filter selects people of several slices (${expected.length})`);
      const filter = encodeURIComponent('displayName co "A"');
      const seen: string[] = [];
      for (let start = 1; start <= expected.length; start += 200) {
        const page = await s.scim('GET', `/Users?filter=${filter}&startIndex=${start}&count=200`);
        assert.equal(page.status, 200, page.text);
        assert.equal(page.json.totalResults, expected.length);
        seen.push(...page.json.Resources.map((r: { id: string }) => r.id));
      }
      assert.deepEqual(seen, expected);
    });
  });
}
