/**
 * Bulk import (contract: "POST /internal/v1/workspaces/{workspace_id}/import"): NDJSON, one
 * operation a line, streamed and applied in short batches; references may point forward in the
 * same import; refused lines are reported with `line`, `pointer`, `code`, `detail`; the same
 * import twice changes nothing; `atomic=true` is all or nothing; `dry_run=true` writes nothing.
 * A real socket is used where the stream itself matters (a cut-off body, a client that leaves).
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { adapterOf } from '../../src/store/database.js';
import { exportRecords, exportRegisters } from '../../src/writes/export.js';
import { DIALECTS } from '../helpers/databases.js';
import type { Harness } from '../helpers/harness.js';
import { until } from '../helpers/processes.js';
import { createWriter, person, site, TEST_TOKEN, vendor, type Writer } from './helpers.js';

const line = (register: string, record: Record<string, unknown>) => JSON.stringify({ register, op: 'upsert', record });
const del = (register: string, id: string) => JSON.stringify({ register, op: 'delete', id });

for (const dialect of DIALECTS) {
  describe(`bulk import [${dialect}]`, () => {
    let w: Writer;
    let h: Harness;
    let base: string;
    before(async () => {
      w = await createWriter(dialect);
      h = w.h;
      await w.internal.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(w.internal.server.address() as AddressInfo).port}`;
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
    const ids = async (ws: string, register: string) =>
      (
        await h.services.database.db
          .selectFrom('records')
          .select('id')
          .where('workspace_id', '=', ws)
          .where('register', '=', register)
          .orderBy('id')
          .execute()
      ).map((r) => r.id);

    /** The stored document of one record. */
    const storedDoc = async (ws: string, id: string) =>
      JSON.parse(
        (
          await h.services.database.db
            .selectFrom('records')
            .select('doc')
            .where('workspace_id', '=', ws)
            .where('id', '=', id)
            .executeTakeFirstOrThrow()
        ).doc,
      );

    it('applies upserts and deletes, reports counts per register and operation, and a manager listed after the report is fine', async () => {
      const ws = await h.workspace({ seed: false });
      const body = [
        line('locations', site('loc_hq')),
        line('people', person('per_report', 'loc_hq', { manager_id: 'per_manager' })),
        line('people', person('per_manager', 'loc_hq')),
        line('vendors', vendor('ven_1', { owner_id: 'per_report' })),
        line('vendors', vendor('ven_2')),
        del('vendors', 'ven_2'),
        del('vendors', 'ven_never'),
      ].join('\n');
      const { status, json } = await importText(ws, body);
      assert.equal(status, 200);
      assert.equal(json.committed, true);
      assert.equal(json.lines, 7);
      assert.equal(json.refused_count, 0, JSON.stringify(json.refused));
      assert.deepEqual(json.counts.people, {
        upsert: { created: 2, updated: 0, unchanged: 0 },
        delete: { deleted: 0, absent: 0 },
        refused: 0,
      });
      assert.deepEqual(
        json.counts.vendors,
        { upsert: { created: 2, updated: 0, unchanged: 0 }, delete: { deleted: 1, absent: 1 }, refused: 0 },
        'each line counts what it did: ven_2 created then deleted, ven_never absent',
      );
      assert.deepEqual(await ids(ws, 'people'), ['per_manager', 'per_report']);
      assert.deepEqual(await ids(ws, 'vendors'), ['ven_1']);
      const key = (await h.key(ws)).key;
      assert.equal((await h.get('/api/v1/people/per_report', key)).json.manager_id, 'per_manager');
    });

    it('what an import writes is found by search at once: new records, a renamed record by its new name only, a deleted one no more', async () => {
      const ws = await h.workspace({ seed: false });
      const key = (await h.key(ws)).key;
      const named = (id: string, family: string) =>
        line('people', person(id, 'loc_hq', { display_name: `Ada ${family}`, family_name: family }));
      const found = async (word: string) =>
        ((await h.get(`/api/v1/people?search=${word}`, key)).json.data as { id: string }[]).map((p) => p.id).sort();
      // New records of one batch (SQLite indexes them in one statement, migration 0024), atomic or not.
      await importText(
        ws,
        [line('locations', site('loc_hq')), named('per_1', 'Vireo'), named('per_2', 'Vireo'), named('per_3', 'Tarn')].join('\n'),
      );
      await importText(ws, [named('per_4', 'Vireo'), named('per_5', 'Vireo')].join('\n'), '?atomic=true');
      assert.deepEqual(await found('vireo'), ['per_1', 'per_2', 'per_4', 'per_5']);
      // One batch that renames a stored record, creates two, and deletes one.
      await importText(ws, [named('per_1', 'Osprey'), named('per_6', 'Osprey'), named('per_7', 'Tarn'), del('people', 'per_2')].join('\n'));
      assert.deepEqual(await found('vireo'), ['per_4', 'per_5'], 'the old name and the deleted record are gone');
      assert.deepEqual(await found('osprey'), ['per_1', 'per_6']);
      assert.deepEqual(await found('tarn'), ['per_3', 'per_7']);
      // A single write after an import still indexes by the trigger (the deferral never outlives its batch).
      const put = await fetch(`${base}/internal/v1/workspaces/${ws}/people/per_8`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(person('per_8', 'loc_hq', { display_name: 'Ada Tarn', family_name: 'Tarn' })),
      });
      assert.equal(put.status, 201);
      assert.deepEqual(await found('tarn'), ['per_3', 'per_7', 'per_8']);
      // A write that leaves the words as they were leaves the index alone (migration 0024), and still finds the record.
      const again = await fetch(`${base}/internal/v1/workspaces/${ws}/people/per_8`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(person('per_8', 'loc_hq', { display_name: 'Ada Tarn', family_name: 'Tarn', job_title: 'Architect' })),
      });
      assert.equal(again.status, 200);
      assert.deepEqual(await found('tarn'), ['per_3', 'per_7', 'per_8']);
      assert.equal(
        (await h.get('/api/v1/people?search=tarn', key)).json.data.find((p: { id: string }) => p.id === 'per_8').job_title,
        'Architect',
      );
    });

    it('the same import twice changes nothing the second time: every record unchanged, updated_at not moved', async () => {
      const ws = await h.workspace({ seed: false });
      const body = `${[line('locations', site('loc_hq')), line('people', person('per_a', 'loc_hq')), line('vendors', vendor('ven_a'))].join('\n')}\n`;
      await importText(ws, body);
      const before = await h.services.database.db
        .selectFrom('records')
        .select(['id', 'updated_at', 'doc'])
        .where('workspace_id', '=', ws)
        .orderBy('id')
        .execute();
      h.clock.advance(60_000);
      const again = await importText(ws, body);
      assert.equal(again.json.counts.people.upsert.unchanged, 1);
      assert.equal(again.json.counts.vendors.upsert.unchanged, 1);
      const afterRows = await h.services.database.db
        .selectFrom('records')
        .select(['id', 'updated_at', 'doc'])
        .where('workspace_id', '=', ws)
        .orderBy('id')
        .execute();
      assert.deepEqual(afterRows, before);
    });

    it('each refused line is reported with its line number, the JSON pointer of the field, a code and why; the other lines are applied', async () => {
      const ws = await h.workspace({ seed: false });
      const body = [
        line('locations', site('loc_hq')),
        line('people', person('per_ok', 'loc_hq')),
        line('people', { ...person('per_typo', 'loc_hq'), job_titel: 'x' }),
        '{"register": "people", "op": "upsert", "record": {',
        line('snacks', { id: 'snk_1' }),
        JSON.stringify({ register: 'people', op: 'merge', record: {} }),
        line('people', person('per_dangling', 'loc_hq', { manager_id: 'per_ghost' })),
        line('vendors', vendor('ven_cur', { currency: 'XYZ' })),
      ].join('\n');
      const { json } = await importText(ws, body);
      const refused = json.refused.map((r: { line: number; pointer: string; code: string }) => [r.line, r.pointer, r.code]);
      assert.deepEqual(refused, [
        [3, '/record/job_titel', 'unknown_field'],
        [4, '', 'invalid_json'],
        [5, '/register', 'unknown_register'],
        [6, '/op', 'invalid_operation'],
        [8, '/record/currency', 'invalid_value'],
        [7, '/record/manager_id', 'dangling_reference'],
      ]);
      assert.ok(json.refused.every((r: { detail: string }) => typeof r.detail === 'string' && r.detail.length > 5));
      assert.equal(json.refused_count, 6);
      assert.deepEqual(await ids(ws, 'people'), ['per_ok']);
    });

    it('hostile lines are refused one by one: a line over 1 MiB, a 900 KB string, bytes that are not UTF-8, a NUL; the lines after them still apply', async () => {
      const ws = await h.workspace({ seed: false });
      const body = Buffer.concat([
        Buffer.from(`${line('locations', site('loc_hq'))}\n`),
        Buffer.from(`${line('people', person('per_huge', 'loc_hq', { job_title: 'x'.repeat(1_200_000) }))}\n`),
        Buffer.from(`${line('people', person('per_long', 'loc_hq', { job_title: 'y'.repeat(900_000) }))}\n`),
        Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]),
        Buffer.from(`${line('people', person('per_nul', 'loc_hq', { job_title: 'a\u0000b' }))}\n`),
        Buffer.from(`${line('people', person('per_fine', 'loc_hq'))}\n`),
      ]);
      const res = await fetch(`${base}/internal/v1/workspaces/${ws}/import`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/x-ndjson' },
        body,
      });
      const json = await res.json();
      assert.deepEqual(
        json.refused.map((r: { line: number; pointer: string; code: string }) => [r.line, r.pointer, r.code]),
        [
          [2, '', 'line_too_long'],
          [3, '/record/job_title', 'too_long'],
          [4, '', 'invalid_json'],
          [5, '/record/job_title', 'invalid_characters'],
        ],
      );
      assert.deepEqual(await ids(ws, 'people'), ['per_fine']);
    });

    it('a line with several faults is refused once and names each of them: every field fault, every dangling reference', async () => {
      const ws = await h.workspace({ seed: false });
      const { given_name: _, ...unnamed } = person('per_two_faults', 'loc_hq');
      const body = [
        line('locations', site('loc_hq')),
        line('people', { ...unnamed, statuss: 'ACTIVE' }),
        line('people', person('per_two_refs', 'loc_nowhere', { manager_id: 'per_ghost' })),
      ].join('\n');
      const { json } = await importText(ws, body);
      const refused = json.refused
        .map((r: { line: number; pointer: string; code: string }) => [r.line, r.pointer, r.code])
        .sort((a: string[], b: string[]) => `${a[0]}${a[1]}`.localeCompare(`${b[0]}${b[1]}`));
      assert.deepEqual(refused, [
        [2, '/record/given_name', 'required'],
        [2, '/record/statuss', 'unknown_field'],
        [3, '/record/location_id', 'dangling_reference'],
        [3, '/record/manager_id', 'dangling_reference'],
      ]);
      assert.equal(json.refused_count, 2, 'two lines refused');
      assert.equal(json.counts.people.refused, 2);
      assert.equal(json.refused_truncated, false);
      assert.deepEqual(await ids(ws, 'people'), []);
    });

    it('every field fault of a line is listed in one round, and a date of the right shape that names no day is said to be no calendar day', async () => {
      const ws = await h.workspace({ seed: false });
      const body = [
        line('locations', site('loc_hq')),
        line('people', person('per_dates', 'loc_hq', { start_date: '2026-02-30', status: 'RETIRED', job_title: 'Tab\u0007bell' })),
        line('vendors', vendor('ven_faults', { currency: 'EUX', status: 'SOMETIMES', renewal_date: '2027-04-31' })),
        line('locations', { ...site('loc_tz'), timezone: 'Mars/Olympus', kind: 'PLANET' }),
      ].join('\n');
      const { json } = await importText(ws, body);
      const byLine = (n: number) =>
        json.refused
          .filter((r: { line: number }) => r.line === n)
          .map((r: { pointer: string; code: string; detail: string }) => [r.pointer, r.code, r.detail])
          .sort();
      assert.deepEqual(byLine(2), [
        ['/record/job_title', 'invalid_characters', byLine(2)[0][2]],
        ['/record/start_date', 'invalid_format', '"2026-02-30" is not a calendar day: February 2026 has 28 days'],
        ['/record/status', 'invalid_value', 'must be one of ACTIVE, INACTIVE'],
      ]);
      assert.deepEqual(
        byLine(3).map((r: string[]) => [r[0], r[1]]),
        [
          ['/record/currency', 'invalid_value'],
          ['/record/renewal_date', 'invalid_format'],
          ['/record/status', 'invalid_value'],
        ],
      );
      assert.match(byLine(3)[1][2], /"2027-04-31" is not a calendar day: April 2027 has 30 days/);
      assert.deepEqual(
        byLine(4).map((r: string[]) => [r[0], r[1]]),
        [
          ['/record/kind', 'invalid_value'],
          ['/record/timezone', 'invalid_value'],
        ],
      );
      assert.equal(json.refused_count, 3);
    });

    it('an id written twice in one file is reported with both line numbers; both lines are applied and the last wins', async () => {
      const ws = await h.workspace({ seed: false });
      const body = [
        line('locations', site('loc_hq')),
        line('people', person('per_twice', 'loc_hq', { job_title: 'First' })),
        line('people', person('per_once', 'loc_hq')),
        line('people', person('per_twice', 'loc_hq', { job_title: 'Second' })),
      ].join('\n');
      const { json } = await importText(ws, body);
      assert.equal(json.refused_count, 0);
      assert.equal(json.repeated_count, 1);
      assert.deepEqual(json.repeated, [
        {
          line: 4,
          first_line: 2,
          register: 'people',
          id: 'per_twice',
          detail: 'per_twice is written again (first at line 2); line 4 is applied and replaces it: the last line for an id wins',
        },
      ]);
      assert.equal((await storedDoc(ws, 'per_twice')).job_title, 'Second');
    });

    it('references may form a cycle inside one import (two people who manage each other), but not point outside it', async () => {
      const ws = await h.workspace({ seed: false });
      const body = [
        line('people', person('per_x', 'loc_hq', { manager_id: 'per_y' })),
        line('people', person('per_y', 'loc_hq', { manager_id: 'per_x' })),
        line('locations', site('loc_hq')),
      ].join('\n');
      const { json } = await importText(ws, body);
      assert.equal(json.refused_count, 0, JSON.stringify(json.refused));
      assert.deepEqual(await ids(ws, 'people'), ['per_x', 'per_y']);
    });

    it('atomic=true is all or nothing: one refused line and nothing is written', async () => {
      const ws = await h.workspace({ seed: false });
      const good = [line('locations', site('loc_hq')), line('people', person('per_1', 'loc_hq'))];
      const refused = await importText(ws, [...good, line('people', person('per_2', 'loc_nowhere'))].join('\n'), '?atomic=true');
      assert.equal(refused.json.committed, false);
      assert.equal(refused.json.refused[0].code, 'dangling_reference');
      assert.deepEqual(await ids(ws, 'locations'), []);
      const ok = await importText(ws, good.join('\n'), '?atomic=true');
      assert.equal(ok.json.committed, true);
      assert.deepEqual(await ids(ws, 'people'), ['per_1']);
    });

    it('dry_run=true checks everything, references included, and writes nothing', async () => {
      const ws = await h.workspace({ seed: false });
      const { json } = await importText(
        ws,
        [line('locations', site('loc_hq')), line('people', person('per_1', 'loc_hq')), line('people', person('per_2', 'loc_zz'))].join(
          '\n',
        ),
        '?dry_run=true',
      );
      assert.equal(json.dry_run, true);
      assert.equal(json.committed, false);
      assert.equal(json.counts.people.upsert.created, 1);
      assert.deepEqual(
        json.refused.map((r: { line: number }) => r.line),
        [3],
      );
      assert.deepEqual(await ids(ws, 'people'), []);
      assert.deepEqual(await ids(ws, 'locations'), []);
    });

    it('a dry run counts what the import then does: new, repeated unchanged and changed in one batch, stored unchanged and changed, deleted', async () => {
      const ws = await h.workspace({ seed: false });
      await importText(ws, [line('locations', site('loc_hq')), line('people', person('per_kept', 'loc_hq'))].join('\n'));
      const body = [
        line('people', person('per_new', 'loc_hq')),
        line('people', person('per_same', 'loc_hq')),
        line('people', person('per_same', 'loc_hq')),
        line('people', person('per_moved', 'loc_hq')),
        line('people', person('per_moved', 'loc_hq', { job_title: 'Moved' })),
        line('people', person('per_kept', 'loc_hq')),
        line('people', person('per_gone', 'loc_hq')),
        del('people', 'per_gone'),
        line('locations', site('loc_hq', 'Renamed')),
      ].join('\n');
      const dry = await importText(ws, body, '?dry_run=true');
      assert.equal(dry.json.refused_count, 0, JSON.stringify(dry.json.refused));
      assert.deepEqual(dry.json.counts.people, {
        upsert: { created: 4, updated: 1, unchanged: 2 },
        delete: { deleted: 1, absent: 0 },
        refused: 0,
      });
      const real = await importText(ws, body);
      assert.deepEqual(dry.json.counts, real.json.counts);
    });
    it('a body that is not NDJSON, or an unknown parameter, is refused before anything is read', async () => {
      const ws = await h.workspace({ seed: false });
      const json = await fetch(`${base}/internal/v1/workspaces/${ws}/import`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'text/plain' },
        body: 'x',
      });
      assert.equal(json.status, 415);
      const param = await importText(ws, line('locations', site('loc_hq')), '?atomik=true');
      assert.equal(param.status, 400);
      assert.equal(param.json.code, 'unknown_parameter');
    });

    it('a stream cut off mid-line: the batches before it stand and the partial line is refused; the same import sent whole then converges', async () => {
      const ws = await h.workspace({ seed: false });
      const lines = [line('locations', site('loc_hq'))];
      for (let i = 0; i < 2500; i++) lines.push(line('people', person(`per_${i}`, 'loc_hq')));
      const whole = `${lines.join('\n')}\n`;
      const cut = whole.slice(0, whole.length - 40);
      const first = await importText(ws, cut);
      assert.equal(first.json.refused_count, 1);
      assert.equal(first.json.refused[0].line, 2501);
      assert.equal(first.json.refused[0].code, 'invalid_json');
      assert.equal((await ids(ws, 'people')).length, 2499);
      const second = await importText(ws, whole);
      assert.equal(second.json.counts.people.upsert.created, 1);
      assert.equal(second.json.counts.people.upsert.unchanged, 2499);
      assert.equal((await ids(ws, 'people')).length, 2500);
    });

    it('a client that disconnects mid-import: every batch is whole or absent, and the import is recorded as ended', async () => {
      const ws = await h.workspace({ seed: false });
      const port = (w.internal.server.address() as AddressInfo).port;
      const batch = adapterOf(dialect).importBatchLines;
      await new Promise<void>((resolve) => {
        const req = httpRequest({
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: `/internal/v1/workspaces/${ws}/import`,
          headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/x-ndjson', 'transfer-encoding': 'chunked' },
        });
        req.on('error', () => resolve());
        req.write(`${line('locations', site('loc_hq'))}\n`);
        let chunk = '';
        for (let i = 0; i < 1500; i++) chunk += `${line('people', person(`per_${i}`, 'loc_hq'))}\n`;
        req.write(chunk);
        req.write('{"register":"people","op":"ups');
        // The client goes away once the server has committed its first batch, mid-line.
        until(async () => (await ids(ws, 'people')).length >= batch - 1, 30_000, 'the first batch').then(() => {
          req.destroy();
          resolve();
        }, resolve);
      });
      // The server notices the reset and ends the import; wait for its record.
      const row = await until(
        () =>
          h.services.database.db
            .selectFrom('record_imports')
            .select(['finished_at', 'report'])
            .where('workspace_id', '=', ws)
            .where('finished_at', 'is not', null)
            .executeTakeFirst(),
        30_000,
        'the import to be recorded as ended',
        20,
      );
      const report = JSON.parse(row.report ?? '{}');
      const people = (await ids(ws, 'people')).length;
      assert.equal(people, report.counts?.people?.upsert.created ?? 0, 'what the report counts as applied is exactly what was written');
      assert.equal(people % batch, batch - 1, `whole batches only (the first holds the location and ${batch - 1} people), got ${people}`);
    });

    it('a batch names and rewrites what the batch before it wrote: present, counted as updated, as the database has it', async () => {
      const ws = await h.workspace({ seed: false });
      const batch = adapterOf(dialect).importBatchLines;
      // The first batch ends with the site and a manager; the second names both and rewrites one person of the first.
      const first = Array.from({ length: batch - 2 }, (_, i) => line('people', person(`per_${i}`, 'loc_hq')));
      const lines = [
        ...first.slice(0, -1),
        line('locations', site('loc_hq')),
        line('people', person('per_manager', 'loc_hq')),
        first.at(-1) as string,
        line('people', person('per_report', 'loc_hq', { manager_id: 'per_manager' })),
        line('people', person('per_0', 'loc_hq', { job_title: 'again' })),
      ];
      const report = (await importText(ws, lines.join('\n'))).json;
      assert.equal(report.refused_count, 0);
      assert.equal(report.counts.people.upsert.created, batch);
      assert.equal(report.counts.people.upsert.updated, 1);
      assert.equal((await storedDoc(ws, 'per_0')).job_title, 'again');
    });

    it('two imports of the same workspace at once both finish, and the records are those of one or the other, whole', async () => {
      const ws = await h.workspace({ seed: false });
      await importText(ws, line('locations', site('loc_hq')));
      const file = (title: string) =>
        Array.from({ length: 1500 }, (_, i) => line('people', person(`per_${i}`, 'loc_hq', { job_title: title }))).join('\n');
      const [a, b] = await Promise.all([importText(ws, file('A')), importText(ws, file('B'))]);
      assert.equal(a.json.refused_count + b.json.refused_count, 0);
      const titles = await h.services.database.db
        .selectFrom('records')
        .select('doc')
        .where('workspace_id', '=', ws)
        .where('register', '=', 'people')
        .execute();
      assert.equal(titles.length, 1500);
      assert.ok(titles.every((t) => ['A', 'B'].includes(JSON.parse(t.doc).job_title)));
    });

    it('while one workspace imports, another workspace is read whole and correct, page after page', async () => {
      const busy = await h.workspace({ seed: false });
      const reader = await h.workspace();
      const key = (await h.key(reader)).key;
      const expected = (await h.get('/api/v1/people?limit=1000', key)).json.data.map((p: { id: string }) => p.id);
      const body = [
        line('locations', site('loc_hq')),
        ...Array.from({ length: 6000 }, (_, i) => line('people', person(`per_${i}`, 'loc_hq'))),
      ].join('\n');
      const importing = importText(busy, body);
      let walks = 0;
      let done = false;
      importing.finally(() => {
        done = true;
      });
      while (!done || walks === 0) {
        const ids: string[] = [];
        let url = '/api/v1/people?limit=7';
        for (;;) {
          const page = await h.get(url, key);
          assert.equal(page.status, 200);
          ids.push(...page.json.data.map((p: { id: string }) => p.id));
          if (!page.json.has_more) break;
          url = `/api/v1/people?limit=7&cursor=${encodeURIComponent(page.json.next_cursor)}`;
        }
        assert.deepEqual(ids, expected);
        walks++;
      }
      assert.equal((await importing).json.counts.people.upsert.created, 6000);
    });

    it('an import is listed in record_imports with its counts, and audited once', async () => {
      const ws = await h.workspace({ seed: false });
      const { json } = await importText(ws, line('locations', site('loc_hq')));
      const row = await h.services.database.db.selectFrom('record_imports').selectAll().where('id', '=', json.id).executeTakeFirstOrThrow();
      assert.equal(row.lines, 1);
      assert.equal(JSON.parse(row.report).counts.locations.upsert.created, 1);
      const audit = await h.services.database.db
        .selectFrom('audit_events')
        .select(['action', 'target'])
        .where('workspace_id', '=', ws)
        .where('action', '=', 'record.imported')
        .execute();
      assert.deepEqual(audit, [{ action: 'record.imported', target: json.id }]);
    });

    it('export gives back the same NDJSON, and an export imported into another workspace with keep_timestamps exports byte for byte the same', async () => {
      const ws = await h.workspace();
      const exported = await (
        await fetch(`${base}/internal/v1/workspaces/${ws}/export`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } })
      ).text();
      assert.ok(exported.split('\n').length > 50);
      const copy = await h.workspace({ seed: false });
      const result = await importText(copy, exported, '?keep_timestamps=true');
      assert.equal(result.json.refused_count, 0, JSON.stringify(result.json.refused.slice(0, 3)));
      const again = await (
        await fetch(`${base}/internal/v1/workspaces/${copy}/export`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } })
      ).text();
      assert.equal(again, exported);
    });

    it('an export lets other requests have a turn between its pages (on SQLite its reads do not leave the event loop)', async () => {
      const ws = await h.workspace();
      const pages = exportRecords(h.services, ws, exportRegisters());
      assert.equal((await pages.next()).done, false);
      let turned = false;
      setImmediate(() => {
        turned = true;
      });
      assert.equal((await pages.next()).done, false);
      assert.ok(turned, 'the next page was read before the event loop served anything else');
      await pages.return(undefined);
    });
  });
}
