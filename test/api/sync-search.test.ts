/** Sync by updated_since, text search, corrections and deletions, as an integrator sees them. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { correctRecord, deleteRecord } from '../../src/actions/correct.js';
import { assets } from '../../src/registers/catalogue.js';
import { nextStamp } from '../../src/writes/next-stamp.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { walkPages } from '../helpers/pages.js';

/** Every record of a list, in pages of 50. */
async function walk(h: Harness, key: string, url: string): Promise<Record<string, unknown>[]> {
  return (await walkPages(h, key, url, 50)).flatMap((p) => p.data);
}

for (const dialect of DIALECTS) {
  describe(`sync and search [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    let key: string;
    before(async () => {
      h = await createHarness(dialect);
      ws = await h.workspace();
      ({ key } = await h.key(ws));
    });
    after(() => h.close());

    it('updated_since returns only records updated strictly after the instant', async () => {
      const all = await walk(h, key, '/api/v1/assets');
      const pivot = all[Math.floor(all.length / 2)]?.updated_at as string;
      const since = await walk(h, key, `/api/v1/assets?updated_since=${pivot}`);
      assert.deepEqual(
        since.map((r) => r.id),
        all.filter((r) => (r.updated_at as string) > pivot).map((r) => r.id),
      );
      assert.ok(
        since.every((r) => (r.updated_at as string) > pivot),
        'strictly after: the pivot record is excluded',
      );
    });

    it('updated_since accepts any ISO 8601 instant with an offset, and the same instant gives the same answer', async () => {
      const utc = await walk(h, key, '/api/v1/people?updated_since=2026-06-01T10:00:00Z');
      for (const form of [
        '2026-06-01T12:00:00%2B02:00',
        '2026-06-01T12:00:00+02:00',
        '2026-06-01T05:00:00.000-05:00',
        '2026-06-01T10:00Z',
      ]) {
        const other = await walk(h, key, `/api/v1/people?updated_since=${form}`);
        assert.deepEqual(
          other.map((r) => r.id),
          utc.map((r) => r.id),
          form,
        );
      }
    });

    for (const bad of ['yesterday', '2026-06-01', '2026-06-01T10:00:00', '2026-02-30T10:00:00Z', '1700000000', '2026-06-01T25:00:00Z']) {
      it(`400 naming updated_since for ${JSON.stringify(bad)}`, async () => {
        const res = await h.get(`/api/v1/people?updated_since=${encodeURIComponent(bad)}`, key);
        assert.equal(res.status, 400);
        assert.equal(res.json.param, 'updated_since');
        assert.match(res.json.detail, /ISO 8601/);
      });
    }

    it('a direct correction moves updated_at, so an updated_since walk from the watermark catches it', async () => {
      const all = await walk(h, key, '/api/v1/vendors');
      const watermark = all
        .map((r) => r.updated_at as string)
        .sort()
        .at(-1) as string;
      const target = all[0] as { id: string; renewal_date: string | null };
      h.clock.advance(1000);
      const corrected = await correctRecord(h.services, ws, 'vendors', target.id, [
        'notice_period_days=45',
        'auto_renews=false',
        'renewal_date=2027-03-01',
      ]);
      assert.equal(corrected.cancellation_deadline, '2027-01-15', 'derived field recomputed: renewal_date minus notice period');
      const changed = await walk(h, key, `/api/v1/vendors?updated_since=${watermark}`);
      assert.deepEqual(
        changed.map((r) => r.id),
        [target.id],
      );
      assert.equal(changed[0]?.notice_period_days, 45);
      assert.equal(changed[0]?.auto_renews, false);
    });

    it('a correction refuses unknown fields, bad values and derived fields, and changes nothing', async () => {
      const [v] = await walk(h, key, '/api/v1/vendors');
      const id = (v as { id: string }).id;
      for (const assignment of ['nope=1', 'status=BOGUS', 'notice_period_days=soon', 'cancellation_deadline=2020-01-01', 'id=ven_x']) {
        await assert.rejects(correctRecord(h.services, ws, 'vendors', id, [assignment]), /./, assignment);
      }
      const detail = await h.get(`/api/v1/vendors/${id}`, key);
      assert.deepEqual(detail.json, v);
    });

    it('a deleted record leaves lists and details; nothing identifies it', async () => {
      const before = await walk(h, key, '/api/v1/tasks');
      // A task no handover or transition names (a named one is not deleted: ADR 43).
      const named = await h.services.database.db.selectFrom('record_refs').select('target_id').where('workspace_id', '=', ws).execute();
      const victim = before.find((r) => !named.some((n) => n.target_id === r.id)) as { id: string };
      await deleteRecord(h.services, ws, 'tasks', victim.id);
      const afterDelete = await walk(h, key, '/api/v1/tasks');
      assert.deepEqual(
        afterDelete.map((r) => r.id),
        before.filter((r) => r.id !== victim.id).map((r) => r.id),
      );
      assert.equal((await h.get(`/api/v1/tasks/${victim.id}`, key)).status, 404);
    });

    it('search is case-insensitive and matches words and word prefixes, all words required', async () => {
      const [asset] = await walk(h, key, '/api/v1/assets');
      const id = (asset as { id: string }).id;
      await correctRecord(h.services, ws, 'assets', id, ['name=Zephyrine Überbook Pro', 'serial_number=QX-7781-ZZ']);
      for (const q of ['zephyrine', 'ZEPHYR', 'zeph pro', 'uberbook', 'qx-7781', '7781']) {
        const res = await walk(h, key, `/api/v1/assets?search=${encodeURIComponent(q)}`);
        assert.deepEqual(
          res.map((r) => r.id),
          [id],
          q,
        );
      }
      for (const q of ['ephyrine', 'zephyrine laptopx']) {
        const res = await walk(h, key, `/api/v1/assets?search=${encodeURIComponent(q)}`);
        assert.deepEqual(res, [], q);
      }
    });

    it('search combines with filters and pages with cursors bound to the search', async () => {
      const people = await walk(h, key, '/api/v1/people');
      const word = String((people[0] as { work_email: string }).work_email)
        .split('@')[1]
        ?.split('.')[0] as string;
      const expected = people.filter(
        (p) => String(p.work_email).includes(`@${word}.`) || String(p.display_name).toLowerCase().includes(word),
      );
      const found = await walk(h, key, `/api/v1/people?search=${word}`);
      assert.ok(found.length >= expected.length && found.length > 0);
      const first = await h.get(`/api/v1/people?search=${word}&limit=1`, key);
      if (first.json.next_cursor) {
        const mismatch = await h.get(`/api/v1/people?search=other&limit=1&cursor=${encodeURIComponent(first.json.next_cursor)}`, key);
        assert.equal(mismatch.json.code, 'cursor_filters_mismatch');
      }
    });

    for (const bad of ['', '!!!', 'x'.repeat(201), 'a b c d e f g h i j k']) {
      it(`400 for search=${JSON.stringify(bad.slice(0, 20))}`, async () => {
        const res = await h.get(`/api/v1/assets?search=${encodeURIComponent(bad)}`, key);
        assert.equal(res.status, 400);
        assert.equal(res.json.param, 'search');
      });
    }

    it('reads see committed data only: a write inside an open transaction is invisible until commit, and forever after a rollback', async () => {
      const [asset] = await walk(h, key, '/api/v1/assets');
      const id = (asset as { id: string }).id;
      await h.services.database.db
        .transaction()
        .execute(async (trx) => {
          const record = await h.services.records.get(ws, assets, id, trx);
          await h.services.records.put(
            ws,
            assets,
            { ...record, name: 'Uncommitted name', updated_at: nextStamp(record?.updated_at as string, h.clock()) },
            trx,
          );
          const during = await h.get(`/api/v1/assets/${id}`, key);
          assert.deepEqual(during.json, asset, 'no dirty read while the transaction is open');
          throw new Error('roll back');
        })
        .catch((err: Error) => assert.equal(err.message, 'roll back'));
      assert.deepEqual((await h.get(`/api/v1/assets/${id}`, key)).json, asset);
    });

    it('a parameter given twice is a 400 naming it', async () => {
      const res = await h.get('/api/v1/assets?status=ASSIGNED&status=AVAILABLE', key);
      assert.equal(res.status, 400);
      assert.equal(res.json.param, 'status');
    });
  });
}
