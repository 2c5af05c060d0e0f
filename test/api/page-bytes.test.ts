/**
 * A list page is the records' own JSON, byte for byte: the database joins the stored documents
 * (issue 9), so these tests pin what a client relies on whatever the query does underneath:
 * every record in a page is exactly its detail response, pages follow (updated_at, id) without
 * a gap or a repeat, `has_more` is false exactly when nothing follows (also when a page ends
 * exactly at the last record), and a non-ASCII record arrives as the same UTF-8.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { correctRecord } from '../../src/actions/correct.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { type Page, page, walkPages } from '../helpers/pages.js';

const order = (r: Record<string, unknown>) => `${r.updated_at} ${r.id}`;

for (const dialect of DIALECTS) {
  describe(`list pages are the stored records, byte for byte [${dialect}]`, () => {
    let h: Harness;
    let key: string;
    let ws: string;
    before(async () => {
      h = await createHarness(dialect);
      ws = await h.workspace();
      ({ key } = await h.key(ws));
    });
    after(() => h.close());

    it('each record of a page is byte-identical to its detail response, and the envelope is exactly data, has_more, next_cursor', async () => {
      const p = await page(h, key, '/api/v1/assets?limit=7');
      const details = await Promise.all(p.data.map(async (r) => (await h.get(`/api/v1/assets/${r.id}`, key)).body));
      const expected = `{"data":[${details.join(',')}],"has_more":${p.has_more},"next_cursor":${JSON.stringify(p.next_cursor)}}`;
      assert.equal(p.body, expected);
    });

    for (const limit of [1, 3, 1000]) {
      it(`a walk at limit=${limit} returns every record once, in (updated_at, id) order`, async () => {
        const pages = await walkPages(h, key, '/api/v1/people', limit);
        const records = pages.flatMap((p) => p.data);
        const sorted = [...records].sort((a, b) => (order(a) < order(b) ? -1 : 1));
        assert.deepEqual(
          records.map((r) => r.id),
          sorted.map((r) => r.id),
        );
        assert.equal(new Set(records.map((r) => r.id)).size, records.length, 'no record twice');
        const all = await page(h, key, '/api/v1/people?limit=1000');
        assert.equal(records.length, all.data.length);
        for (const p of pages.slice(0, -1)) assert.equal(p.data.length, limit, 'every page but the last is full');
      });
    }

    it('a page that ends exactly at the last record says has_more false and gives no cursor', async () => {
      const all = await page(h, key, '/api/v1/locations?limit=1000');
      const n = all.data.length;
      assert.ok(n >= 2, 'the seed has locations');
      const exact = await page(h, key, `/api/v1/locations?limit=${n}`);
      assert.equal(exact.data.length, n);
      assert.equal(exact.has_more, false);
      assert.equal(exact.next_cursor, null);
      const short = await page(h, key, `/api/v1/locations?limit=${n - 1}`);
      assert.equal(short.has_more, true);
      assert.ok(short.next_cursor);
      const rest = await page(h, key, `/api/v1/locations?limit=${n}&cursor=${encodeURIComponent(short.next_cursor as string)}`);
      assert.deepEqual(
        rest.data.map((r) => r.id),
        [all.data[n - 1]?.id],
      );
      assert.equal(rest.has_more, false);
    });

    it('an empty page is {"data":[],"has_more":false,"next_cursor":null}', async () => {
      const future = new Date(h.clock() + 86_400_000).toISOString();
      const res = await h.get(`/api/v1/assets?updated_since=${encodeURIComponent(future)}`, key);
      assert.equal(res.body, '{"data":[],"has_more":false,"next_cursor":null}');
    });

    it('filtered and updated_since pages hold the same bytes as the records they select', async () => {
      const all = await walkPages(h, key, '/api/v1/assets', 1000);
      const records = all.flatMap((p) => p.data);
      const status = records[0]?.status as string;
      const filtered = (await walkPages(h, key, `/api/v1/assets?status=${status}`, 5)).flatMap((p) => p.data);
      assert.deepEqual(
        filtered.map((r) => r.id),
        records.filter((r) => r.status === status).map((r) => r.id),
      );
      const mid = records[Math.floor(records.length / 2)] as Record<string, unknown>;
      const since = (await walkPages(h, key, `/api/v1/assets?updated_since=${encodeURIComponent(mid.updated_at as string)}`, 4)).flatMap(
        (p) => p.data,
      );
      assert.deepEqual(
        since.map((r) => r.id),
        records.filter((r) => (r.updated_at as string) > (mid.updated_at as string)).map((r) => r.id),
      );
    });

    it('a record with non-ASCII text arrives as the same UTF-8 in a page and in its detail', async () => {
      const first = (await page(h, key, '/api/v1/locations?limit=1')).data[0] as Record<string, unknown>;
      h.clock.advance(1000);
      await correctRecord(h.services, ws, 'locations', first.id as string, ['name=Zürich — 東京 ✓ 🏢']);
      const detail = await h.get(`/api/v1/locations/${first.id}`, key);
      assert.equal(detail.json.name, 'Zürich — 東京 ✓ 🏢');
      const last = (await walkPages(h, key, '/api/v1/locations', 1000)).at(-1) as Page;
      assert.ok(last.body.includes(detail.body), 'the page carries the detail bytes');
      assert.equal(last.data.at(-1)?.name, 'Zürich — 東京 ✓ 🏢');
    });
  });
}
