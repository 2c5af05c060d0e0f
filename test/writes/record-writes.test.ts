/**
 * The system of record's writes of one record on the internal listener (contract: "System of
 * record writes"): PUT creates (201) or replaces (200) a whole record, PATCH is a JSON merge
 * patch, DELETE removes it; answers carry the record as /api/v1 returns it and an ETag from
 * updated_at; If-Match makes a write conditional (412). Ids are the caller's; writes are direct:
 * they move updated_at, emit no event, and are read back at once by lists, details, sync and
 * search. Bad input is a 422 naming the field by JSON pointer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DIALECTS } from '../helpers/databases.js';
import type { Harness } from '../helpers/harness.js';
import { createWriter, person, site, vendor, type Writer } from './helpers.js';

for (const dialect of DIALECTS) {
  describe(`record writes on the internal listener [${dialect}]`, () => {
    let w: Writer;
    let h: Harness;
    let ws: string;
    let key: string;
    before(async () => {
      w = await createWriter(dialect);
      h = w.h;
      ws = await h.workspace({ seed: false });
      key = (await h.key(ws)).key;
      assert.equal((await w.write('PUT', `${ws}/locations/loc_hq`, site('loc_hq'))).status, 201);
    });
    after(async () => {
      await w.internal.close();
      await h.close();
    });

    const eventCount = async () =>
      Number(
        (
          await h.services.database.db
            .selectFrom('events')
            .select((e) => e.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    it("PUT creates a record with the caller's id (201, ETag from updated_at) and /api/v1 returns exactly the same object at once", async () => {
      const uuid = 'per_0b6c2f3e-6d0a-4f7e-9a51-3f1e2d4c5b6a';
      h.clock.advance(1000);
      const res = await w.write('PUT', `${ws}/people/${uuid}`, person(uuid, 'loc_hq'));
      assert.equal(res.status, 201, res.body);
      assert.equal(res.json.id, uuid);
      assert.equal(res.headers.etag, `"${res.json.updated_at}"`);
      assert.equal(res.json.created_at, res.json.updated_at);
      assert.equal(res.json.manager_id, null, 'an omitted nullable field is null');
      const detail = await h.get(`/api/v1/people/${uuid}`, key);
      assert.equal(detail.status, 200);
      assert.equal(detail.body, res.body, 'the detail is byte-for-byte the stored record');
      const list = await h.get('/api/v1/people?limit=1000', key);
      assert.ok(
        list.json.data.some((p: { id: string }) => p.id === uuid),
        'listed at once',
      );
      const since = await h.get(
        `/api/v1/people?updated_since=${encodeURIComponent(new Date(Date.parse(res.json.updated_at) - 1).toISOString())}`,
        key,
      );
      assert.deepEqual(
        since.json.data.map((p: { id: string }) => p.id),
        [uuid],
        'an updated_since walk sees it',
      );
      const search = await h.get('/api/v1/people?search=quill', key);
      assert.ok(
        search.json.data.some((p: { id: string }) => p.id === uuid),
        'search finds it at once',
      );
    });

    it('PUT of an existing record replaces it (200): created_at kept, updated_at moved; the same body again changes nothing', async () => {
      const id = 'per_replace-1';
      const first = await w.write('PUT', `${ws}/people/${id}`, person(id, 'loc_hq'));
      h.clock.advance(5000);
      const second = await w.write('PUT', `${ws}/people/${id}`, person(id, 'loc_hq', { job_title: 'Lead Engineer' }));
      assert.equal(second.status, 200, second.body);
      assert.equal(second.json.job_title, 'Lead Engineer');
      assert.equal(second.json.created_at, first.json.created_at);
      assert.ok(second.json.updated_at > first.json.updated_at);
      h.clock.advance(5000);
      const third = await w.write('PUT', `${ws}/people/${id}`, {
        ...person(id, 'loc_hq', { job_title: 'Lead Engineer' }),
        created_at: 'ignored',
        updated_at: 'ignored',
      });
      assert.equal(third.status, 200, third.body);
      assert.equal(third.json.updated_at, second.json.updated_at, 'an identical record does not move updated_at');
    });

    it('direct writes emit no event (PUT, PATCH, DELETE)', async () => {
      const before = await eventCount();
      await w.write('PUT', `${ws}/vendors/ven_noevent`, vendor('ven_noevent'));
      await w.write('PATCH', `${ws}/vendors/ven_noevent`, { status: 'CANCELLED' });
      await w.write('DELETE', `${ws}/vendors/ven_noevent`);
      assert.equal(await eventCount(), before);
    });

    it('derived fields are computed by wsops; a body that sets cancellation_deadline differently is a 422 naming it', async () => {
      const ok = await w.write('PUT', `${ws}/vendors/ven_derived`, vendor('ven_derived'));
      assert.equal(ok.json.cancellation_deadline, '2026-12-02');
      const same = await w.write('PUT', `${ws}/vendors/ven_derived`, vendor('ven_derived', { cancellation_deadline: '2026-12-02' }));
      assert.equal(same.status, 200);
      const wrong = await w.write('PUT', `${ws}/vendors/ven_derived`, vendor('ven_derived', { cancellation_deadline: '2026-01-01' }));
      assert.equal(wrong.status, 422);
      assert.equal(wrong.json.code, 'invalid_record');
      assert.equal(wrong.json.pointer, '/cancellation_deadline');
      assert.equal(wrong.json.errors[0].code, 'derived_mismatch');
    });

    it('bad fields are 422 invalid_record with the JSON pointer of each field, and nothing is written', async () => {
      const cases: [Record<string, unknown>, string, string][] = [
        [{ ...vendor('ven_bad'), colour: 'red' }, '/colour', 'unknown_field'],
        [vendor('ven_bad', { category: 'SNACKS' }), '/category', 'invalid_value'],
        [vendor('ven_bad', { currency: 'XYZ' }), '/currency', 'invalid_value'],
        [vendor('ven_bad', { currency: 'eur' }), '/currency', 'invalid_format'],
        [vendor('ven_bad', { annual_cost_minor: 12.5 }), '/annual_cost_minor', 'invalid_type'],
        [vendor('ven_bad', { annual_cost_minor: -1 }), '/annual_cost_minor', 'out_of_range'],
        [vendor('ven_bad', { annual_cost_minor: 2 ** 60 }), '/annual_cost_minor', 'out_of_range'],
        [vendor('ven_bad', { renewal_date: '2027-02-30' }), '/renewal_date', 'invalid_format'],
        [vendor('ven_bad', { name: 'nul\u0000byte' }), '/name', 'invalid_characters'],
        [vendor('ven_bad', { name: 'lone \ud800 surrogate' }), '/name', 'invalid_characters'],
        [vendor('ven_bad', { name: 'x'.repeat(1001) }), '/name', 'too_long'],
        [vendor('ven_bad', { owner_id: 'loc_hq' }), '/owner_id', 'invalid_format'],
        [vendor('ven_bad', { auto_renews: { a: { b: { c: [[[[1]]]] } } } }), '/auto_renews', 'invalid_type'],
        [(({ name: _n, ...v }) => v)(vendor('ven_bad')), '/name', 'required'],
      ];
      for (const [body, pointer, code] of cases) {
        const res = await w.write('PUT', `${ws}/vendors/ven_bad`, body);
        assert.equal(res.status, 422, `${pointer}: ${res.body}`);
        assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
        assert.equal(res.json.pointer, pointer, res.body);
        assert.equal(res.json.errors[0].code, code, res.body);
      }
      assert.equal((await h.get('/api/v1/vendors/ven_bad', key)).status, 404, 'nothing was written');
    });

    it('hostile bodies get a clear 4xx, never a 500: arrays nested 400,000 deep, an object nested 100,000 deep, a __proto__ member', async () => {
      const base = JSON.stringify(vendor('ven_hostile'));
      const deepArray = `${'['.repeat(400_000)}${']'.repeat(400_000)}`;
      const deepObject = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
      for (const value of [deepArray, deepObject]) {
        const res = await w.write('PUT', `${ws}/vendors/ven_hostile`, base.replace('"name":"Paperclip Cloud"', `"name":${value}`));
        assert.equal(res.status, 422);
        assert.equal(res.json.pointer, '/name');
      }
      const proto = await w.write(
        'PUT',
        `${ws}/vendors/ven_hostile`,
        base.replace('"name":"Paperclip Cloud"', '"name":"x","__proto__":{"admin":true}'),
      );
      assert.equal(proto.status, 400);
      assert.equal(proto.json.code, 'invalid_request');
    });

    it('nested items are checked too: an unknown member of an approver is named by its pointer', async () => {
      const pr = {
        id: 'prq_nested',
        title: 'Laptops',
        requester_id: 'per_replace-1',
        amount_minor: 5000,
        currency: 'EUR',
        status: 'SUBMITTED',
        approvers: [{ person_id: 'per_replace-1', step: 1, decision: 'PENDING', decided_at: null, mood: 'happy' }],
      };
      const res = await w.write('PUT', `${ws}/purchase-requests/prq_nested`, pr);
      assert.equal(res.status, 422);
      assert.equal(res.json.pointer, '/approvers/0/mood');
      assert.equal(res.json.errors[0].code, 'unknown_field');
    });

    it('a reference to a record the workspace does not hold is 422 dangling_reference', async () => {
      const res = await w.write('PUT', `${ws}/people/per_orphan`, person('per_orphan', 'loc_hq', { manager_id: 'per_nobody' }));
      assert.equal(res.status, 422);
      assert.equal(res.json.pointer, '/manager_id');
      assert.equal(res.json.errors[0].code, 'dangling_reference');
    });

    it("ids: the path's id is checked before any query (400), a body id that differs is 422, and two workspaces may hold the same id", async () => {
      for (const bad of ['per_has space', 'per_%00', 'ven_wrongprefix', `per_${'a'.repeat(65)}`]) {
        const res = await w.write('PUT', `${ws}/people/${encodeURIComponent(bad)}`, person('per_x', 'loc_hq'));
        assert.equal(res.status, 400, `${bad}: ${res.body}`);
        assert.equal(res.json.code, 'invalid_parameter');
      }
      const mismatch = await w.write('PUT', `${ws}/people/per_a`, person('per_b', 'loc_hq'));
      assert.equal(mismatch.status, 422);
      assert.equal(mismatch.json.errors[0].code, 'id_mismatch');
      const other = await h.workspace({ seed: false });
      assert.equal((await w.write('PUT', `${other}/locations/loc_hq`, site('loc_hq', 'Other HQ'))).status, 201);
      const mine = await h.get('/api/v1/locations/loc_hq', key);
      assert.equal(mine.json.name, 'Harbour Office', "another workspace's record with the same id is its own");
      const unknownRegister = await w.write('PUT', `${ws}/snacks/snk_1`, {});
      assert.equal(unknownRegister.status, 404);
      const unknownWorkspace = await w.write('PUT', 'wsp_nowhere/locations/loc_hq', site('loc_hq'));
      assert.equal(unknownWorkspace.status, 404);
    });

    it('PATCH is a JSON merge patch: members replace, null removes (nullable becomes null), derived fields are recomputed', async () => {
      await w.write('PUT', `${ws}/vendors/ven_patch`, vendor('ven_patch', { seats_purchased: 10 }));
      const res = await w.write('PATCH', `${ws}/vendors/ven_patch`, { renewal_date: '2027-06-01', seats_purchased: null });
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.renewal_date, '2027-06-01');
      assert.equal(res.json.cancellation_deadline, '2027-05-02');
      assert.equal(res.json.seats_purchased, null);
      assert.equal(res.json.name, 'Paperclip Cloud', 'untouched members stay');
      const asJson = await w.write('PATCH', `${ws}/vendors/ven_patch`, JSON.stringify({ name: 'Paperclip' }), {
        'content-type': 'application/json',
      });
      assert.equal(asJson.status, 200);
      assert.equal(asJson.json.name, 'Paperclip');
      const required = await w.write('PATCH', `${ws}/vendors/ven_patch`, { name: null });
      assert.equal(required.status, 422);
      assert.equal(required.json.pointer, '/name');
      assert.equal((await w.write('PATCH', `${ws}/vendors/ven_missing`, { name: 'x' })).status, 404);
    });

    it('If-Match makes a write conditional: a stale ETag is 412 and changes nothing; If-None-Match: * creates only', async () => {
      const a = await w.write('PUT', `${ws}/vendors/ven_cond`, vendor('ven_cond'));
      h.clock.advance(1000);
      const b = await w.write('PATCH', `${ws}/vendors/ven_cond`, { name: 'Writer B' }, { 'if-match': a.headers.etag as string });
      assert.equal(b.status, 200);
      const stale = await w.write('PATCH', `${ws}/vendors/ven_cond`, { name: 'Writer A' }, { 'if-match': a.headers.etag as string });
      assert.equal(stale.status, 412);
      assert.equal(stale.json.code, 'precondition_failed');
      assert.equal((await h.get('/api/v1/vendors/ven_cond', key)).json.name, 'Writer B');
      const createOnly = await w.write('PUT', `${ws}/vendors/ven_cond`, vendor('ven_cond'), { 'if-none-match': '*' });
      assert.equal(createOnly.status, 412);
      const staleDelete = await w.write('DELETE', `${ws}/vendors/ven_cond`, undefined, { 'if-match': a.headers.etag as string });
      assert.equal(staleDelete.status, 412);
      const current = await w.write('GET', `${ws}/vendors/ven_cond`);
      assert.equal(current.headers.etag, b.headers.etag);
    });

    it('two writers with If-Match at once: exactly one wins, the other gets 412', async () => {
      const a = await w.write('PUT', `${ws}/vendors/ven_race`, vendor('ven_race'));
      h.clock.advance(1000);
      const results = await Promise.all(
        ['one', 'two', 'three', 'four'].map((n) =>
          w.write('PATCH', `${ws}/vendors/ven_race`, { name: n }, { 'if-match': a.headers.etag as string }),
        ),
      );
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 412, 412, 412]);
    });

    it('DELETE removes the record from every list and detail (204); deleting an unknown id is 404', async () => {
      await w.write('PUT', `${ws}/vendors/ven_gone`, vendor('ven_gone'));
      const res = await w.write('DELETE', `${ws}/vendors/ven_gone`);
      assert.equal(res.status, 204);
      assert.equal((await h.get('/api/v1/vendors/ven_gone', key)).status, 404);
      const list = await h.get('/api/v1/vendors?limit=1000', key);
      assert.ok(!list.json.data.some((v: { id: string }) => v.id === 'ven_gone'));
      assert.equal((await w.write('DELETE', `${ws}/vendors/ven_gone`)).status, 404);
    });

    it('writes need the operator token (401) and a body over 1 MB is 413', async () => {
      const res = await w.internal.inject({
        method: 'PUT',
        url: `/internal/v1/workspaces/${ws}/vendors/ven_x`,
        headers: { 'content-type': 'application/json' },
        payload: '{}',
      });
      assert.equal(res.statusCode, 401);
      const big = await w.write('PUT', `${ws}/vendors/ven_big`, vendor('ven_big', { name: 'x'.repeat(1_100_000) }));
      assert.equal(big.status, 413);
      assert.equal(big.json.code, 'payload_too_large');
    });
  });
}
