/**
 * The cross-cutting rules of the read API, generated for every register from its declaration
 * (never written eleven times): authentication, scopes, parameters, cursors, ids, modules, and
 * the same rules on each register's deletions feed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { deleteRecord } from '../../src/actions/correct.js';
import { revokeKey } from '../../src/keys/keys.js';
import { REGISTERS } from '../../src/registers/catalogue.js';
import { ALWAYS_INSTALLED, READ_SCOPES } from '../../src/registers/define.js';
import { idPattern } from '../../src/registers/fields.js';
import { setModule } from '../../src/workspaces/workspaces.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { unreferencedCopies } from '../helpers/record-copies.js';

const withoutRequestId = (body: Record<string, unknown>) => ({ ...body, request_id: undefined });

for (const dialect of DIALECTS) {
  describe(`read API cross-cutting rules [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    let other: string;
    let key: string;
    let keyId: string;
    let otherKey: string;
    let reference401: Record<string, unknown>;
    /** A workspace whose records the feed tests delete, so the other tests keep the seed whole. */
    let feedWs: string;
    let feedKey: string;

    before(async () => {
      h = await createHarness(dialect);
      ws = await h.workspace();
      other = await h.workspace();
      ({ key, keyId } = await h.key(ws));
      ({ key: otherKey } = await h.key(other));
      feedWs = await h.workspace();
      ({ key: feedKey } = await h.key(feedWs));
      const res = await h.get('/api/v1/assets');
      reference401 = withoutRequestId(res.json);
    });
    after(() => h.close());

    for (const register of REGISTERS) {
      const list = `/api/v1/${register.path}`;
      describe(register.path, () => {
        it('401 without a key, with WWW-Authenticate: Bearer and a problem body', async () => {
          const res = await h.get(list);
          assert.equal(res.status, 401);
          assert.match(String(res.headers['www-authenticate']), /^Bearer/);
          assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
          assert.equal(res.json.code, 'unauthorized');
          assert.ok(res.json.request_id);
          assert.equal(res.headers['request-id'], res.json.request_id);
        });

        it('401 is identical for unknown key, wrong secret, malformed header, other environment, revoked and expired keys', async () => {
          const [, , , id] = key.split('_');
          const wrongSecret = `svc_sk_test_${id}_${'A'.repeat(43)}`;
          const unknown = `svc_sk_test_${'Z'.repeat(16)}_${'B'.repeat(43)}`;
          const otherEnv = await h.key(ws, READ_SCOPES, { env: 'live' });
          const revoked = await h.key(ws);
          await revokeKey(h.services.database.db, ws, revoked.keyId, h.clock());
          const shortLived = await h.key(ws, READ_SCOPES, { days: 1 });
          const bodies = [];
          for (const k of [wrongSecret, unknown, 'not-a-key', otherEnv.key, revoked.key]) {
            const res = await h.get(list, k);
            assert.equal(res.status, 401, `key ${k.slice(0, 20)}`);
            bodies.push(withoutRequestId(res.json));
          }
          for (const header of [`Basic ${key}`, `Bearer`, key, `Bearer ${key} extra`]) {
            const res = await h.get(list, undefined, { authorization: header });
            assert.equal(res.status, 401, header.slice(0, 20));
            bodies.push(withoutRequestId(res.json));
          }
          h.clock.advance(86_400_000 + 1);
          const expired = await h.get(list, shortLived.key);
          h.clock.advance(-(86_400_000 + 1));
          assert.equal(expired.status, 401);
          bodies.push(withoutRequestId(expired.json));
          for (const b of bodies) assert.deepEqual(b, reference401);
        });

        it('a cookie or query-string key is never read', async () => {
          const res = await h.get(`${list}?api_key=${key}`, undefined, { cookie: `session=${key}` });
          assert.equal(res.status, 401);
        });

        it(`403 names the missing scope ${register.scope}`, async () => {
          const others = READ_SCOPES.filter((s) => s !== register.scope);
          const { key: narrow } = await h.key(ws, [...others, 'kpi:record']);
          const listBody = withoutRequestId((await h.get(list, narrow)).json);
          for (const url of [list, `${list}/${register.idPrefix}_x`, `${list}/deletions`, `${list}/deletions?limit=0`]) {
            const res = await h.get(url, narrow);
            assert.equal(res.status, 403);
            if (url.includes('/deletions')) assert.deepEqual(withoutRequestId(res.json), listBody, 'the feed answers the list 403');
            assert.equal(res.json.code, 'missing_scope');
            assert.equal(res.json.missing_scope, register.scope);
            assert.match(res.json.detail, new RegExp(register.scope));
          }
        });

        it('lists every record once in (updated_at, id) order across pages, with the envelope of the contract', async () => {
          const seen: Record<string, unknown>[] = [];
          let cursor: string | undefined;
          let pages = 0;
          do {
            const res = await h.get(`${list}?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, key);
            assert.equal(res.status, 200);
            assert.deepEqual(Object.keys(res.json), ['data', 'has_more', 'next_cursor']);
            assert.equal(res.json.next_cursor === null, res.json.has_more === false, 'next_cursor is null exactly when has_more is false');
            seen.push(...res.json.data);
            cursor = res.json.next_cursor ?? undefined;
            pages++;
          } while (cursor);
          assert.ok(seen.length > 0, 'the seed gives every register records');
          const ids = seen.map((r) => r.id as string);
          assert.equal(new Set(ids).size, ids.length, 'no record twice');
          const keys = seen.map((r) => `${r.updated_at}|${r.id}`);
          assert.deepEqual(keys, [...keys].sort(), 'ascending (updated_at, id)');
          assert.equal(pages, Math.max(1, Math.ceil(seen.length / 7)));
          for (const r of seen) assert.ok((r.id as string).startsWith(`${register.idPrefix}_`));
        });

        it('a detail is the same object as in the list', async () => {
          const res = await h.get(`${list}?limit=3`, key);
          for (const record of res.json.data) {
            const detail = await h.get(`${list}/${record.id}`, key);
            assert.equal(detail.status, 200);
            assert.deepEqual(detail.json, record);
          }
        });

        it('404 not_found for an unknown id and for an id of another workspace (no existence leak)', async () => {
          const foreign = await h.get(`${list}?limit=1`, otherKey);
          const foreignId = foreign.json.data[0].id;
          for (const id of [foreignId, `${register.idPrefix}_doesnotexist`, 'nonsense', 'x'.repeat(150)]) {
            const res = await h.get(`${list}/${encodeURIComponent(id)}`, key);
            assert.equal(res.status, 404, id);
            assert.equal(res.json.code, 'not_found');
          }
        });

        for (const limit of ['0', '1001', 'abc', '1.5', '-1', '']) {
          it(`400 invalid_parameter for limit=${JSON.stringify(limit)}`, async () => {
            const res = await h.get(`${list}?limit=${limit}`, key);
            assert.equal(res.status, 400);
            assert.equal(res.json.param, 'limit');
          });
        }

        it('400 unknown_parameter for a parameter the endpoint does not take', async () => {
          const res = await h.get(`${list}?updated_sinse=2026-01-01T00:00:00Z`, key);
          assert.equal(res.status, 400);
          assert.equal(res.json.code, 'unknown_parameter');
          assert.equal(res.json.param, 'updated_sinse');
          const detail = await h.get(`${list}/${register.idPrefix}_x?limit=2`, key);
          assert.equal(detail.status, 400);
        });

        for (const filter of register.filters) {
          it(`400 for a ${filter} value outside the accepted set, and matches only for a valid one`, async () => {
            const bad = await h.get(`${list}?${filter}=NOT_A_VALUE`, key);
            assert.equal(bad.status, 400);
            assert.equal(bad.json.code, 'invalid_parameter');
            assert.equal(bad.json.param, filter);
            const all = await h.get(`${list}?limit=1000`, key);
            const value = all.json.data.find((r: Record<string, unknown>) => r[filter] !== null)?.[filter];
            assert.ok(value, `seed has a record with ${filter}`);
            const filtered = await h.get(`${list}?limit=1000&${filter}=${value}`, key);
            assert.equal(filtered.status, 200);
            const expected = all.json.data.filter((r: Record<string, unknown>) => r[filter] === value).map((r: { id: string }) => r.id);
            assert.deepEqual(
              filtered.json.data.map((r: { id: string }) => r.id),
              expected,
            );
          });
        }

        it(register.search.length ? 'search is accepted' : '400 search_not_supported', async () => {
          const res = await h.get(`${list}?search=a`, key);
          if (register.search.length) assert.equal(res.status, 200);
          else {
            assert.equal(res.status, 400);
            assert.equal(res.json.code, 'search_not_supported');
          }
        });

        it("400 invalid_cursor for an edited cursor, another register's or another workspace's cursor", async () => {
          const first = await h.get(`${list}?limit=1`, key);
          const cursor: string = first.json.next_cursor;
          assert.ok(cursor);
          const [body, mac] = cursor.split('.') as [string, string];
          const payload = JSON.parse(Buffer.from(body, 'base64url').toString());
          payload.u = '2000-01-01T00:00:00.000Z';
          const edited = `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${mac}`;
          const flipped = `${cursor.slice(0, -2)}${cursor.at(-2) === 'A' ? 'B' : 'A'}${cursor.slice(-1)}`;
          for (const c of [edited, flipped, 'garbage', `${cursor}x`]) {
            const res = await h.get(`${list}?limit=1&cursor=${encodeURIComponent(c)}`, key);
            assert.equal(res.status, 400);
            assert.equal(res.json.code, 'invalid_cursor');
            assert.equal(res.json.param, 'cursor');
          }
          const foreign = await h.get(`${list}?limit=1`, otherKey);
          const res = await h.get(`${list}?limit=1&cursor=${encodeURIComponent(foreign.json.next_cursor)}`, key);
          assert.equal(res.json.code, 'invalid_cursor');
        });

        it('400 cursor_filters_mismatch when filters change mid-walk; limit may change', async () => {
          const first = await h.get(`${list}?limit=1&updated_since=2000-01-01T00:00:00Z`, key);
          const c = encodeURIComponent(first.json.next_cursor);
          const changed = await h.get(`${list}?limit=1&updated_since=2001-01-01T00:00:00Z&cursor=${c}`, key);
          assert.equal(changed.json.code, 'cursor_filters_mismatch');
          const dropped = await h.get(`${list}?limit=1&cursor=${c}`, key);
          assert.equal(dropped.json.code, 'cursor_filters_mismatch');
          const sameFilters = await h.get(`${list}?limit=5&updated_since=2000-01-01T00:00:00Z&cursor=${c}`, key);
          assert.equal(sameFilters.status, 200);
        });

        it('400 cursor_expired 24 hours after issue', async () => {
          const first = await h.get(`${list}?limit=1`, key);
          h.clock.advance(24 * 3600_000 + 1);
          const res = await h.get(`${list}?limit=1&cursor=${encodeURIComponent(first.json.next_cursor)}`, key);
          h.clock.advance(-(24 * 3600_000 + 1));
          assert.equal(res.json.code, 'cursor_expired');
        });

        describe('deletions feed', () => {
          const feed = `${list}/deletions`;
          let copies = 0;
          /** Writes `n` records nothing references into the feed's workspace and deletes them, one millisecond apart. */
          async function deleteSome(n: number): Promise<string[]> {
            const ids = await unreferencedCopies(h.services, feedWs, register.path, n, `feed${copies++}x`);
            for (const id of ids) {
              h.clock.advance(1);
              await deleteRecord(h.services, feedWs, register.path, id);
            }
            return ids;
          }

          it(`401 without a key; "deletions" is a static route, never an id (ids are ${register.idPrefix}_…)`, async () => {
            assert.equal((await h.get(feed)).status, 401);
            assert.equal(idPattern(register.idPrefix).test('deletions'), false);
            const res = await h.get(feed, feedKey);
            assert.equal(res.status, 200);
            assert.deepEqual(Object.keys(res.json), ['data', 'has_more', 'next_cursor']);
          });

          it('a deleted record leaves the list and is in the feed; the feed pages in (deleted_at, id) order with the list envelope; since is strictly after', async () => {
            const before = await h.get(feed, feedKey);
            const deleted = [...before.json.data.map((t: { id: string }) => t.id), ...(await deleteSome(3))];
            const seen: { id: string; deleted_at: string }[] = [];
            let cursor: string | undefined;
            let pages = 0;
            do {
              const res = await h.get(`${feed}?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, feedKey);
              assert.equal(res.status, 200);
              assert.deepEqual(Object.keys(res.json), ['data', 'has_more', 'next_cursor']);
              assert.equal(res.json.next_cursor === null, res.json.has_more === false);
              seen.push(...res.json.data);
              cursor = res.json.next_cursor ?? undefined;
              pages++;
            } while (cursor);
            assert.deepEqual(
              seen.map((t) => t.id),
              deleted,
            );
            const keys = seen.map((t) => `${t.deleted_at}|${t.id}`);
            assert.deepEqual(keys, [...keys].sort(), 'ascending (deleted_at, id)');
            assert.equal(pages, Math.ceil(seen.length / 2));
            const listed = await h.get(`${list}?limit=1000`, feedKey);
            for (const id of deleted) {
              assert.ok(!listed.json.data.some((r: { id: string }) => r.id === id), `${id} left the list`);
              assert.equal((await h.get(`${list}/${id}`, feedKey)).status, 404);
            }
            const since = seen.at(-2)?.deleted_at as string;
            const after = await h.get(`${feed}?since=${encodeURIComponent(since)}`, feedKey);
            assert.deepEqual(after.json.data, seen.slice(-1));
            const other = await h.get(feed, key);
            assert.deepEqual(other.json.data, [], "another workspace's deletions are not in this one's feed");
          });

          it('400 for a bad limit, a bad since, and any other parameter (the list filters and updated_since included)', async () => {
            for (const [query, param, code] of [
              ['limit=0', 'limit', 'invalid_parameter'],
              ['limit=1001', 'limit', 'invalid_parameter'],
              ['since=2026-02-30T00:00:00Z', 'since', 'invalid_parameter'],
              ['since=', 'since', 'invalid_parameter'],
              ['updated_since=2026-01-01T00:00:00Z', 'updated_since', 'unknown_parameter'],
              ['search=a', 'search', 'unknown_parameter'],
              ...register.filters.map((f) => [`${f}=x`, f, 'unknown_parameter']),
            ] as [string, string, string][]) {
              const res = await h.get(`${feed}?${query}`, feedKey);
              assert.equal(res.status, 400, query);
              assert.equal(res.json.code, code, query);
              assert.equal(res.json.param, param, query);
            }
          });

          it("cursors: a list's cursor is refused by the feed and the feed's by the list; edited, foreign, expired and changed-since cursors are refused", async () => {
            if ((await h.get(feed, feedKey)).json.data.length < 2) await deleteSome(2);
            const first = await h.get(`${feed}?limit=1`, feedKey);
            const cursor: string = first.json.next_cursor;
            assert.ok(cursor);
            const listCursor: string = (await h.get(`${list}?limit=1`, feedKey)).json.next_cursor;
            const onList = await h.get(`${list}?limit=1&cursor=${encodeURIComponent(cursor)}`, feedKey);
            assert.equal(onList.json.code, 'invalid_cursor');
            const onFeed = await h.get(`${feed}?limit=1&cursor=${encodeURIComponent(listCursor)}`, feedKey);
            assert.equal(onFeed.json.code, 'invalid_cursor');
            const flipped = `${cursor.slice(0, -2)}${cursor.at(-2) === 'A' ? 'B' : 'A'}${cursor.slice(-1)}`;
            const edited = await h.get(`${feed}?limit=1&cursor=${encodeURIComponent(flipped)}`, feedKey);
            assert.equal(edited.json.code, 'invalid_cursor');
            const foreign = await h.get(`${feed}?limit=1&cursor=${encodeURIComponent(cursor)}`, key);
            assert.equal(foreign.json.code, 'invalid_cursor');
            const changed = await h.get(`${feed}?limit=1&since=2026-01-01T00:00:00Z&cursor=${encodeURIComponent(cursor)}`, feedKey);
            assert.equal(changed.json.code, 'cursor_filters_mismatch');
            const limitChanged = await h.get(`${feed}?limit=5&cursor=${encodeURIComponent(cursor)}`, feedKey);
            assert.equal(limitChanged.status, 200, 'limit may change');
            h.clock.advance(24 * 3600_000 + 1);
            const expired = await h.get(`${feed}?limit=1&cursor=${encodeURIComponent(cursor)}`, feedKey);
            h.clock.advance(-(24 * 3600_000 + 1));
            assert.equal(expired.json.code, 'cursor_expired');
            assert.match(expired.json.detail, /resume with since/);
          });

          it('a since before the retention horizon is 400 deletions_beyond_retention', async () => {
            const old = new Date(h.clock() - (h.services.config.deletionRetentionDays + 1) * 86_400_000).toISOString();
            const res = await h.get(`${feed}?since=${old}`, feedKey);
            assert.equal(res.status, 400);
            assert.equal(res.json.code, 'deletions_beyond_retention');
            assert.equal(res.json.param, 'since');
          });
        });

        if (!(ALWAYS_INSTALLED as readonly string[]).includes(register.module)) {
          it(`uninstalled module ${register.module}: empty list and 404 detail even with the scope; back when reinstalled`, async () => {
            const before = await h.get(`${list}?limit=1`, key);
            const id = before.json.data[0].id;
            // A deletion the feed shows while the module is installed.
            const [copy] = await unreferencedCopies(h.services, ws, register.path, 1, 'modulecopy');
            await deleteRecord(h.services, ws, register.path, copy as string);
            assert.equal((await h.get(`${list}/deletions`, key)).json.data.length, 1);
            await setModule(h.services.database.db, ws, register.module, false, new Date(h.clock()).toISOString());
            try {
              const empty = await h.get(list, key);
              assert.equal(empty.status, 200);
              assert.deepEqual(empty.json, { data: [], has_more: false, next_cursor: null });
              const detail = await h.get(`${list}/${id}`, key);
              assert.equal(detail.status, 404);
              const feed = await h.get(`${list}/deletions`, key);
              assert.deepEqual(feed.json, { data: [], has_more: false, next_cursor: null }, 'the deletions feed is empty too');
              assert.equal((await h.get(`${list}/deletions?limit=0`, key)).status, 400);
              const bad = await h.get(`${list}?limit=0`, key);
              assert.equal(bad.status, 400, 'parameters are still checked before the module');
            } finally {
              await setModule(h.services.database.db, ws, register.module, true, new Date(h.clock()).toISOString());
            }
            assert.equal((await h.get(`${list}/${id}`, key)).status, 200);
            assert.equal((await h.get(`${list}/deletions`, key)).json.data.length, 1, 'the feed is back with the module');
          });
        }
      });
    }

    it('GET /api/v1/scopes tells the key its scopes, for any valid key', async () => {
      const res = await h.get('/api/v1/scopes', key);
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, {
        key_id: keyId,
        environment: 'test',
        workspace_id: ws,
        scopes: [...READ_SCOPES],
        expires_at: res.json.expires_at,
      });
      const { key: kpiOnly } = await h.key(ws, ['kpi:record']);
      assert.deepEqual((await h.get('/api/v1/scopes', kpiOnly)).json.scopes, ['kpi:record']);
    });

    it('every response carries Request-Id; writes are 405 with Allow: GET', async () => {
      const res = await h.app.inject({ method: 'POST', url: '/api/v1/assets', headers: { authorization: `Bearer ${key}` } });
      assert.equal(res.statusCode, 405);
      assert.match(String(res.headers.allow), /GET/);
      assert.ok(res.headers['request-id']);
      const missing = await h.get('/api/v1/nothing-here', key);
      assert.equal(missing.status, 404);
      assert.ok(missing.headers['request-id']);
    });
  });
}
