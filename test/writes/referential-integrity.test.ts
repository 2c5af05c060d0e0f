/**
 * Referential integrity on delete, on the internal listener, in `wsops delete` (deleteRecord)
 * and in an import: a record other records still name is not deleted (409 `referenced`, or a
 * refused line), and the refusal names the referrers per register and field; once they point
 * elsewhere the delete succeeds. A write is judged on what it changes: a reference that
 * already dangles (data written before this rule, or copied in) does not block an unrelated
 * change of the record that holds it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { correctRecord, deleteRecord } from '../../src/actions/correct.js';
import { AppError } from '../../src/errors.js';
import { adapterOf } from '../../src/store/database.js';
import { referenceFields } from '../../src/writes/referrers.js';
import { DIALECTS } from '../helpers/databases.js';
import type { Harness } from '../helpers/harness.js';
import { createWriter, person, site, TEST_TOKEN, vendor, type Writer } from './helpers.js';

const line = (register: string, record: Record<string, unknown>) => JSON.stringify({ register, op: 'upsert', record });
const del = (register: string, id: string) => JSON.stringify({ register, op: 'delete', id });

describe('reference fields come from the register declarations', () => {
  it("every `*_id` / `*_ids` field naming a register is one, nested items included; content_id (no register) and tasks' source_id are not", () => {
    const fields = referenceFields().map((f) => `${f.register}.${f.field}->${f.names}`);
    for (const expected of [
      'people.manager_id->people',
      'people.team_id->locations',
      'people.location_id->locations',
      'locations.parent_id->locations',
      'vendors.owner_id->people',
      'purchase-requests.approvers[].person_id->people',
      'purchase-requests.vendor_id->vendors',
      'systems.access[].person_id->people',
      'assets.custody[].person_id->people',
      'assets.assigned_user_id->people',
      'tasks.assignee_id->people',
      'handovers.items[].task_id->tasks',
      'transitions.held_asset_ids->assets',
      'transitions.held_system_ids->systems',
      'workplace-records.person_ids->people',
    ]) {
      assert.ok(fields.includes(expected), expected);
    }
    assert.ok(!fields.some((f) => f.includes('content_id') || f.includes('source_id')));
    assert.ok(!fields.some((f) => /\.id->/.test(f)), "a record's own id is not a reference");
  });
});

for (const dialect of DIALECTS) {
  describe(`referential integrity on delete [${dialect}]`, () => {
    let w: Writer;
    let h: Harness;
    let base: string;
    before(async () => {
      w = await createWriter(dialect);
      h = w.h;
      await w.internal.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(w.internal.server.address() as { port: number }).port}`;
    });
    after(async () => {
      await w.internal.close();
      await h.close();
    });

    async function importText(ws: string, body: string, query = '') {
      const res = await fetch(`${base}/internal/v1/workspaces/${ws}/import${query}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/x-ndjson' },
        body,
      });
      return { status: res.status, json: await res.json() };
    }
    const exists = async (ws: string, id: string) =>
      (await h.services.database.db
        .selectFrom('records')
        .select('id')
        .where('workspace_id', '=', ws)
        .where('id', '=', id)
        .executeTakeFirst()) !== undefined;
    async function put(ws: string, register: string, record: { id: string } & Record<string, unknown>) {
      const res = await w.write('PUT', `${ws}/${register}/${record.id}`, record);
      assert.ok(res.status === 200 || res.status === 201, res.body);
    }

    it('DELETE of a person others still name is 409 `referenced`, naming each register and field with a count and the first ids; nothing is deleted', async () => {
      const ws = await h.workspace({ seed: false });
      await put(ws, 'locations', site('loc_hq'));
      await put(ws, 'people', person('per_boss', 'loc_hq'));
      for (let i = 1; i <= 12; i++)
        await put(ws, 'people', person(`per_r${String(i).padStart(2, '0')}`, 'loc_hq', { manager_id: 'per_boss' }));
      await put(ws, 'vendors', vendor('ven_1', { owner_id: 'per_boss' }));
      await put(ws, 'workplace-records', {
        id: 'wpr_1',
        record_type: 'INCIDENT',
        status: 'OPEN',
        title: 'per_boss slipped', // the id in a title is not a reference
        location_id: 'loc_hq',
        person_ids: ['per_r01', 'per_boss'],
        occurred_at: '2026-01-01T09:00:00Z',
      });
      await put(ws, 'workplace-records', {
        id: 'wpr_2',
        record_type: 'INCIDENT',
        status: 'OPEN',
        title: 'Mentions "per_boss" only in its title',
        location_id: 'loc_hq',
        occurred_at: '2026-01-01T09:00:00Z',
      });

      const res = await w.write('DELETE', `${ws}/people/per_boss`);
      assert.equal(res.status, 409, res.body);
      assert.match(String(res.headers['content-type']), /application\/problem\+json/);
      assert.equal(res.json.code, 'referenced');
      assert.deepEqual(res.json.referrers, [
        {
          register: 'people',
          field: 'manager_id',
          count: 12,
          ids: ['per_r01', 'per_r02', 'per_r03', 'per_r04', 'per_r05', 'per_r06', 'per_r07', 'per_r08', 'per_r09', 'per_r10'],
        },
        { register: 'vendors', field: 'owner_id', count: 1, ids: ['ven_1'] },
        { register: 'workplace-records', field: 'person_ids', count: 1, ids: ['wpr_1'] },
      ]);
      assert.match(res.json.detail, /per_boss is still referenced: 12 people by manager_id \(per_r01, per_r02, per_r03, \.\.\.\)/);
      assert.match(res.json.detail, /delete them first/);
      assert.ok(await exists(ws, 'per_boss'));

      // A location is named by people's location_id (and the workplace record's).
      const loc = await w.write('DELETE', `${ws}/locations/loc_hq`);
      assert.equal(loc.status, 409);
      assert.deepEqual(
        loc.json.referrers.map((r: { register: string; field: string; count: number }) => [r.register, r.field, r.count]),
        [
          ['people', 'location_id', 13],
          ['workplace-records', 'location_id', 2],
        ],
      );
    });

    it('the same delete succeeds once the referrers point elsewhere or are gone; a record naming itself does not block its own delete', async () => {
      const ws = await h.workspace({ seed: false });
      await put(ws, 'locations', site('loc_hq'));
      await put(ws, 'people', person('per_old', 'loc_hq'));
      await put(ws, 'people', person('per_new', 'loc_hq'));
      await put(ws, 'people', person('per_a', 'loc_hq', { manager_id: 'per_old' }));
      await put(ws, 'purchase-requests', {
        id: 'prq_1',
        title: 'Laptops',
        requester_id: 'per_a',
        amount_minor: 100,
        currency: 'EUR',
        status: 'SUBMITTED',
        approvers: [{ person_id: 'per_old', step: 1, decision: 'PENDING', decided_at: null }],
      });
      assert.equal((await w.write('DELETE', `${ws}/people/per_old`)).status, 409);

      assert.equal((await w.write('PATCH', `${ws}/people/per_a`, { manager_id: 'per_new' })).status, 200);
      const still = await w.write('DELETE', `${ws}/people/per_old`);
      assert.equal(still.status, 409);
      assert.deepEqual(still.json.referrers, [{ register: 'purchase-requests', field: 'approvers[].person_id', count: 1, ids: ['prq_1'] }]);
      assert.equal((await w.write('DELETE', `${ws}/purchase-requests/prq_1`)).status, 204);
      assert.equal((await w.write('DELETE', `${ws}/people/per_old`)).status, 204);
      assert.ok(!(await exists(ws, 'per_old')));

      await put(ws, 'people', person('per_self', 'loc_hq', { manager_id: 'per_self' }));
      assert.equal((await w.write('DELETE', `${ws}/people/per_self`)).status, 204);
    });

    it('`wsops delete` (deleteRecord) refuses the same way, naming the referrers, and deletes once they are gone', async () => {
      const ws = await h.workspace({ seed: false });
      await put(ws, 'locations', site('loc_hq'));
      await put(ws, 'people', person('per_boss', 'loc_hq'));
      await put(ws, 'people', person('per_a', 'loc_hq', { manager_id: 'per_boss' }));
      await assert.rejects(deleteRecord(h.services, ws, 'people', 'per_boss'), (err: unknown) => {
        assert.ok(err instanceof AppError);
        assert.equal(err.code, 'referenced');
        assert.equal(err.status, 409);
        assert.match(err.message, /1 people by manager_id \(per_a\)/);
        assert.deepEqual(err.extra.referrers, [{ register: 'people', field: 'manager_id', count: 1, ids: ['per_a'] }]);
        return true;
      });
      assert.ok(await exists(ws, 'per_boss'));
      // A correction (wsops correct) keeps the index of references in step like every write.
      await correctRecord(h.services, ws, 'people', 'per_a', ['manager_id=null']);
      await deleteRecord(h.services, ws, 'people', 'per_boss');
      assert.ok(!(await exists(ws, 'per_boss')));
    });

    it('`wsops correct` (correctRecord) checks the references it writes like a PATCH: one to no record is refused and changes nothing, and a correction racing the delete of the record it names never leaves it dangling', async () => {
      const ws = await h.workspace({ seed: false });
      await put(ws, 'locations', site('loc_hq'));
      await put(ws, 'people', person('per_a', 'loc_hq'));
      const stored = await w.write('GET', `${ws}/people/per_a`);
      await assert.rejects(correctRecord(h.services, ws, 'people', 'per_a', ['manager_id=per_nobody']), (err: unknown) => {
        assert.ok(err instanceof AppError);
        assert.match(JSON.stringify(err.extra), /dangling_reference/);
        assert.match(JSON.stringify(err.extra), /per_nobody/);
        return true;
      });
      assert.deepEqual((await w.write('GET', `${ws}/people/per_a`)).json, stored.json, 'nothing changed');
      await assert.rejects(correctRecord(h.services, ws, 'people', 'per_a', ['__proto__=x']), /has no field "__proto__"/);
      assert.equal(({} as Record<string, unknown>).x, undefined);

      // Each pair at once: the delete of a person, and a correction naming it as a manager.
      const PAIRS = 8;
      for (let i = 0; i < PAIRS; i++) {
        await put(ws, 'people', person(`per_t${i}`, 'loc_hq'));
        await put(ws, 'people', person(`per_r${i}`, 'loc_hq'));
      }
      const outcomes = await Promise.all(
        Array.from({ length: PAIRS }, (_, i) =>
          Promise.allSettled([
            deleteRecord(h.services, ws, 'people', `per_t${i}`),
            correctRecord(h.services, ws, 'people', `per_r${i}`, [`manager_id=per_t${i}`]),
          ]),
        ),
      );
      for (const [i, [deleted, corrected]] of outcomes.entries()) {
        assert.ok(deleted.status === 'fulfilled' || corrected.status === 'fulfilled', `pair ${i}: one of the two wins`);
        const manager = (await w.write('GET', `${ws}/people/per_r${i}`)).json.manager_id;
        if (manager === `per_t${i}`) assert.ok(await exists(ws, `per_t${i}`), `pair ${i}: per_r${i} names a manager that exists`);
        assert.ok(!(deleted.status === 'fulfilled' && corrected.status === 'fulfilled'), `pair ${i}: not both`);
      }
    });

    it('a reference that already dangles (its record removed underneath, as in data copied in) does not block an unrelated PATCH, PUT or import line', async () => {
      const ws = await h.workspace({ seed: false });
      await put(ws, 'locations', site('loc_hq'));
      await put(ws, 'people', person('per_gone', 'loc_hq'));
      await put(ws, 'people', person('per_a', 'loc_hq', { manager_id: 'per_gone' }));
      // The state data written before deletes were checked (or copied in) can be in: the row
      // removed directly, per_a still naming it.
      await h.services.database.db.deleteFrom('records').where('workspace_id', '=', ws).where('id', '=', 'per_gone').execute();

      const patch = await w.write('PATCH', `${ws}/people/per_a`, { job_title: 'Staff Engineer' });
      assert.equal(patch.status, 200, patch.body);
      assert.equal(patch.json.job_title, 'Staff Engineer');
      assert.equal(patch.json.manager_id, 'per_gone', 'the dangling reference is left as it was');
      const putRes = await w.write(
        'PUT',
        `${ws}/people/per_a`,
        person('per_a', 'loc_hq', { manager_id: 'per_gone', job_title: 'Principal' }),
      );
      assert.equal(putRes.status, 200, putRes.body);

      // A change of that reference is judged: to another missing record it is refused.
      const repoint = await w.write('PATCH', `${ws}/people/per_a`, { manager_id: 'per_ghost' });
      assert.equal(repoint.status, 422);
      assert.equal(repoint.json.errors[0].code, 'dangling_reference');
      assert.equal(repoint.json.errors[0].pointer, '/manager_id');
      // A new record may not name a missing one either.
      const fresh = await w.write('PUT', `${ws}/people/per_b`, person('per_b', 'loc_hq', { manager_id: 'per_gone' }));
      assert.equal(fresh.status, 422);

      const { json } = await importText(ws, line('people', person('per_a', 'loc_hq', { manager_id: 'per_gone', job_title: 'Fellow' })));
      assert.equal(json.refused_count, 0, JSON.stringify(json.refused));
      assert.equal(json.counts.people.upsert.updated, 1);
    });

    it('an import judges a delete at its line: writing a location, a manager and a report, then deleting the manager, is refused at the delete line', async () => {
      const ws = await h.workspace({ seed: false });
      const body = [
        line('locations', site('loc_hq')),
        line('people', person('per_mgr', 'loc_hq')),
        line('people', person('per_rep', 'loc_hq', { manager_id: 'per_mgr' })),
        del('people', 'per_mgr'),
      ].join('\n');
      for (const query of ['?dry_run=true', '?atomic=true', '']) {
        const { json } = await importText(ws, body, query);
        assert.equal(json.refused_count, 1, query);
        assert.deepEqual(json.refused, [
          {
            line: 4,
            pointer: '/id',
            code: 'referenced',
            detail:
              'per_mgr is still referenced: 1 people by manager_id (per_rep). Point those records elsewhere (or clear the field), or delete them first, then delete per_mgr',
            referrers: [{ register: 'people', field: 'manager_id', count: 1, ids: ['per_rep'] }],
          },
        ]);
        assert.equal(json.counts.people.refused, 1);
        assert.equal(json.counts.people.delete.deleted, 0);
      }
      assert.ok(await exists(ws, 'per_mgr'), 'the batch import wrote the lines before, and kept the manager');
      assert.ok(await exists(ws, 'per_rep'));

      // The report listed before its manager still names it at the delete line.
      const reportFirst = await h.workspace({ seed: false });
      const { json } = await importText(
        reportFirst,
        [
          line('people', person('per_rep', 'loc_hq', { manager_id: 'per_mgr' })),
          line('locations', site('loc_hq')),
          line('people', person('per_mgr', 'loc_hq')),
          del('people', 'per_mgr'),
        ].join('\n'),
      );
      assert.deepEqual(
        json.refused.map((r: { line: number; code: string; referrers?: unknown }) => [r.line, r.code, r.referrers]),
        [[4, 'referenced', [{ register: 'people', field: 'manager_id', count: 1, ids: ['per_rep'] }]]],
      );
      assert.ok(await exists(reportFirst, 'per_rep'));
    });

    it('a file that repoints the referrers first and deletes after succeeds; one that deletes first fails at that line', async () => {
      const ws = await h.workspace({ seed: false });
      const setup = [
        line('locations', site('loc_hq')),
        line('people', person('per_mgr', 'loc_hq')),
        line('people', person('per_new', 'loc_hq')),
        line('people', person('per_rep', 'loc_hq', { manager_id: 'per_mgr' })),
      ].join('\n');
      assert.equal((await importText(ws, setup)).json.refused_count, 0);

      const deleteFirst = [del('people', 'per_mgr'), line('people', person('per_rep', 'loc_hq', { manager_id: 'per_new' }))].join('\n');
      const refused = await importText(ws, deleteFirst, '?dry_run=true');
      assert.deepEqual(
        refused.json.refused.map((r: { line: number; code: string }) => [r.line, r.code]),
        [[1, 'referenced']],
      );

      const repointFirst = [line('people', person('per_rep', 'loc_hq', { manager_id: 'per_new' })), del('people', 'per_mgr')].join('\n');
      for (const query of ['?dry_run=true', '']) {
        const { json } = await importText(ws, repointFirst, query);
        assert.equal(json.refused_count, 0, JSON.stringify(json.refused));
        assert.equal(json.counts.people.delete.deleted, 1);
      }
      assert.ok(!(await exists(ws, 'per_mgr')));

      // A referrer written earlier in the file (a batch before the delete's) and deleted later in
      // the same file no longer blocks; one that names it again after a repoint does.
      const filler = Array.from({ length: adapterOf(dialect).importBatchLines + 5 }, (_, i) => line('locations', site(`loc_f${i}`)));
      const acrossBatches = [
        line('people', person('per_tmp', 'loc_hq')),
        line('people', person('per_x', 'loc_hq', { manager_id: 'per_tmp' })),
        ...filler,
        del('people', 'per_x'),
        del('people', 'per_tmp'),
      ].join('\n');
      for (const query of ['?dry_run=true', '']) {
        const { json } = await importText(ws, acrossBatches, query);
        assert.equal(json.refused_count, 0, `${query} ${JSON.stringify(json.refused)}`);
        assert.equal(json.counts.people.delete.deleted, 2);
      }
      const renamedAgain = [
        line('people', person('per_tmp2', 'loc_hq')),
        line('people', person('per_y', 'loc_hq')),
        ...filler,
        line('people', person('per_y', 'loc_hq', { manager_id: 'per_tmp2' })),
        del('people', 'per_tmp2'),
      ].join('\n');
      for (const query of ['?dry_run=true', '']) {
        const { json } = await importText(ws, renamedAgain, query);
        assert.deepEqual(
          json.refused.map((r: { line: number; code: string }) => [r.line, r.code]),
          [[filler.length + 4, 'referenced']],
          query,
        );
      }
    });

    it("a workspace's export imports into a fresh workspace, with and without keep_timestamps, after its deletes were checked", async () => {
      const ws = await h.workspace({ seed: false });
      const body = [
        line('locations', site('loc_hq')),
        line('people', person('per_mgr', 'loc_hq')),
        line('people', person('per_rep', 'loc_hq', { manager_id: 'per_mgr' })),
        del('people', 'per_mgr'),
      ].join('\n');
      await importText(ws, body);
      const exported = await (
        await fetch(`${base}/internal/v1/workspaces/${ws}/export`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } })
      ).text();
      for (const query of ['?dry_run=true', '', '?keep_timestamps=true']) {
        const fresh = await h.workspace({ seed: false });
        const { json } = await importText(fresh, exported, query);
        assert.equal(json.refused_count, 0, `${query} ${JSON.stringify(json.refused)}`);
        assert.equal(json.lines, 3);
      }
    });
  });
}
