/**
 * `wsops import` and `wsops export` as an operator runs them: real processes against a real
 * database. NDJSON from a file and from standard input, CSV of one register with JSON in a cell,
 * --dry-run writes nothing, a refused line exits 2 with its number, pointer and reason, and
 * `export | import --keep-timestamps -` moves a workspace byte for byte, also from SQLite to
 * PostgreSQL.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness, TEST_SECRET } from '../helpers/harness.js';

const BIN = new URL('../../bin/wsops', import.meta.url).pathname;

function cli(databaseUrl: string, args: readonly string[], input?: string) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    env: { ...process.env, WSOPS_DATABASE_URL: databaseUrl, WSOPS_SECRET: TEST_SECRET, WSOPS_LOG_LEVEL: 'silent' },
    encoding: 'utf8',
    input,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `wsops export --workspace FROM | wsops import --workspace TO --keep-timestamps -`, as the README says. */
function pipeExportImport(from: { url: string; ws: string }, to: { url: string; ws: string }) {
  const node = process.execPath;
  const r = spawnSync(
    'sh',
    [
      '-c',
      `WSOPS_DATABASE_URL="$FROM_URL" "$NODE" "$BIN" export --workspace "$FROM_WS" | WSOPS_DATABASE_URL="$TO_URL" "$NODE" "$BIN" import --workspace "$TO_WS" --keep-timestamps --json -`,
    ],
    {
      env: {
        ...process.env,
        NODE: node,
        BIN,
        FROM_URL: from.url,
        FROM_WS: from.ws,
        TO_URL: to.url,
        TO_WS: to.ws,
        WSOPS_SECRET: TEST_SECRET,
        WSOPS_LOG_LEVEL: 'silent',
      },
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const line = (register: string, record: Record<string, unknown>) => JSON.stringify({ register, op: 'upsert', record });
const site = (id: string) => ({ id, name: 'Harbour Office', kind: 'SITE', timezone: 'Europe/Berlin' });
const person = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  display_name: 'Ada Quill',
  given_name: 'Ada',
  family_name: 'Quill',
  work_email: 'ada.quill@example.com',
  job_title: 'Engineer',
  location_id: 'loc_cli_hq',
  status: 'ACTIVE',
  start_date: '2024-02-01',
  ...extra,
});

for (const dialect of DIALECTS) {
  describe(`wsops import and export [${dialect}]`, () => {
    let h: Harness;
    let key: string;
    let dir: string;
    const run = (args: readonly string[], input?: string) => cli(h.databaseUrl, args, input);
    const get = async (_ws: string, path: string) => (await h.get(`/api/v1/${path}`, key)).json;
    const count = async (ws: string, register: string) =>
      Number(
        (
          await h.services.database.db
            .selectFrom('records')
            .select((e) => e.fn.countAll().as('n'))
            .where('workspace_id', '=', ws)
            .where('register', '=', register)
            .executeTakeFirstOrThrow()
        ).n,
      );
    before(async () => {
      h = await createHarness(dialect);
      dir = mkdtempSync(join(tmpdir(), 'wsops-import-cli-'));
    });
    after(async () => {
      rmSync(dir, { recursive: true, force: true });
      await h.close();
    });

    it('imports an NDJSON file (a manager named before it is written is fine), then the same lines from standard input change nothing', async () => {
      const ws = await h.workspace({ seed: false });
      key = (await h.key(ws)).key;
      const file = join(dir, 'people.ndjson');
      const text = `${[
        line('people', person('per_cli_ada', { manager_id: 'per_cli_bob' })),
        line('locations', site('loc_cli_hq')),
        line('people', person('per_cli_bob', { display_name: 'Bob Stone', given_name: 'Bob', family_name: 'Stone' })),
      ].join('\n')}\n`;
      writeFileSync(file, text);
      const first = run(['import', '--workspace', ws, file, '--json']);
      assert.equal(first.status, 0, first.stderr);
      const report = JSON.parse(first.stdout);
      assert.equal(report.committed, true);
      assert.equal(report.lines, 3);
      assert.deepEqual(report.counts.people.upsert, { created: 2, updated: 0, unchanged: 0 });
      assert.deepEqual(report.counts.locations.upsert, { created: 1, updated: 0, unchanged: 0 });
      const ada = await get(ws, 'people/per_cli_ada');
      assert.equal(ada.manager_id, 'per_cli_bob');
      assert.equal(ada.location_id, 'loc_cli_hq');

      const again = run(['import', '--workspace', ws, '-'], text);
      assert.equal(again.status, 0, again.stderr);
      assert.match(again.stdout, /^imported 3 lines into /);
      assert.match(again.stdout, /^people\s+0\s+0\s+2\s+0\s+0\s+0$/m, again.stdout);
      assert.equal((await get(ws, 'people/per_cli_ada')).updated_at, ada.updated_at, 'an identical record keeps its updated_at');
    });

    it('imports CSV of one register: typed cells, TRUE/FALSE, empty cells as null, JSON lists in a quoted cell, errors by row number', async () => {
      const ws = await h.workspace({ seed: false });
      key = (await h.key(ws)).key;
      const setup = run(
        ['import', '--workspace', ws, '-'],
        `${line('locations', site('loc_cli_hq'))}\n${line('people', person('per_cli_ada'))}\n`,
      );
      assert.equal(setup.status, 0, setup.stderr);
      const vendors = join(dir, 'vendors.csv');
      writeFileSync(
        vendors,
        '\uFEFFid,name,category,status,annual_cost_minor,currency,contract_start_date,renewal_date,notice_period_days,auto_renews,seats_purchased\r\n' +
          'ven_cli_1,"Paperclip, Inc.",SOFTWARE,ACTIVE,120000,EUR,2025-01-01,2027-01-01,30,TRUE,\r\n' +
          'ven_cli_2,Staples,OTHER,ACTIVE,lots,EUR,2025-01-01,,0,false,5\r\n',
      );
      const v = run(['import', '--workspace', ws, '--register', 'vendors', vendors]);
      assert.equal(v.status, 2, v.stderr);
      assert.match(v.stdout, /^line 3 \/record\/annual_cost_minor invalid_type: must be integer$/m, v.stdout);
      assert.match(v.stdout, /^imported 2 lines into /m, 'a header and 2 rows are 2 lines; a refused line keeps its row number');
      const paperclip = await get(ws, 'vendors/ven_cli_1');
      assert.equal(paperclip.name, 'Paperclip, Inc.');
      assert.equal(paperclip.annual_cost_minor, 120000);
      assert.equal(paperclip.auto_renews, true);
      assert.equal(paperclip.seats_purchased, null);
      assert.equal(paperclip.cancellation_deadline, '2026-12-02', 'derived fields are computed');

      const access = JSON.stringify([{ person_id: 'per_cli_ada', level: 'ADMIN', granted_at: '2025-03-01T09:00:00+01:00' }]);
      const systems = join(dir, 'systems.csv');
      writeFileSync(
        systems,
        `id,name,category,status,owner_id,access\nsys_cli_1,Ledger,FINANCE,ACTIVE,per_cli_ada,"${access.replaceAll('"', '""')}"\nsys_cli_2,Wiki,OTHER,ACTIVE,,\n`,
      );
      const s = run(['import', '--workspace', ws, '--register', 'systems', systems, '--json']);
      assert.equal(s.status, 0, s.stdout + s.stderr);
      assert.deepEqual(JSON.parse(s.stdout).counts.systems.upsert, { created: 2, updated: 0, unchanged: 0 });
      assert.equal(JSON.parse(s.stdout).lines, 2, 'the header is not a line of the report');
      const ledger = await get(ws, 'systems/sys_cli_1');
      assert.deepEqual(ledger.access, [{ person_id: 'per_cli_ada', level: 'ADMIN', granted_at: '2025-03-01T08:00:00.000Z' }]);
      const wiki = await get(ws, 'systems/sys_cli_2');
      assert.equal(wiki.owner_id, null);
      assert.deepEqual(wiki.access, []);

      const typo = join(dir, 'typo.csv');
      writeFileSync(typo, 'id,name,categroy\nsys_cli_3,Mail,OTHER\n');
      const t = run(['import', '--workspace', ws, '--register', 'systems', typo]);
      assert.equal(t.status, 2);
      assert.match(t.stderr, /^wsops: CSV column "categroy" is not a field of systems; fields are: id, name, category/);
      assert.equal(t.stderr.trim().split('\n').length, 1);
    });

    it('--dry-run checks every line and reports what would happen, and writes nothing', async () => {
      const ws = await h.workspace({ seed: false });
      const text = `${line('locations', site('loc_cli_hq'))}\n${line('people', person('per_cli_ada'))}\n`;
      const r = run(['import', '--workspace', ws, '--dry-run', '--json', '-'], text);
      assert.equal(r.status, 0, r.stderr);
      const report = JSON.parse(r.stdout);
      assert.equal(report.dry_run, true);
      assert.equal(report.committed, false);
      assert.deepEqual(report.counts.people.upsert, { created: 1, updated: 0, unchanged: 0 });
      assert.equal(await count(ws, 'people'), 0);
      assert.equal(await count(ws, 'locations'), 0);
    });

    it('a refused line: exit 2, a line-numbered report with pointer and reason, control characters escaped; the good lines stand', async () => {
      const ws = await h.workspace({ seed: false });
      const text = [
        line('locations', site('loc_cli_hq')),
        'not json at all',
        line('people', person('per_cli_ada', { manager_id: 'per_cli_nobody' })),
        line('people', { ...person('per_cli_eve'), 'evil\u001b[2Jfield': 1 }),
        line('people', person('per_cli_bob')),
      ].join('\n');
      const r = run(['import', '--workspace', ws, '-'], text);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stdout, /^imported 5 lines into \S+: 2 applied, 3 refused$/m, 'the first line says what took effect');
      assert.match(r.stdout, /^3 lines refused:$/m);
      const refusals = r.stdout.split('\n').filter((l) => l.startsWith('line '));
      assert.equal(refusals.length, 3, r.stdout);
      assert.match(refusals[0] as string, /^line 2 invalid_json: is not JSON/);
      assert.match(refusals[1] as string, /^line 3 \/record\/manager_id dangling_reference: names per_cli_nobody/);
      assert.match(refusals[2] as string, /^line 4 \/record\/evil\\u\{1b\}\[2Jfield unknown_field: /);
      assert.ok(!r.stdout.includes('\u001b'), 'no terminal escape reaches the terminal');
      assert.equal(await count(ws, 'people'), 1, 'line 5 was written');
    });

    it('a delete of a record still named is refused by import (at its line) and by wsops delete, naming the referrers; the export then imports into a fresh workspace', async () => {
      const ws = await h.workspace({ seed: false });
      const file = join(dir, 'delete-manager.ndjson');
      writeFileSync(
        file,
        `${[
          line('locations', site('loc_cli_hq')),
          line('people', person('per_cli_mgr')),
          line('people', person('per_cli_rep', { manager_id: 'per_cli_mgr' })),
          JSON.stringify({ register: 'people', op: 'delete', id: 'per_cli_mgr' }),
        ].join('\n')}\n`,
      );
      for (const args of [['--dry-run'], []]) {
        const r = run(['import', '--workspace', ws, file, ...args]);
        assert.equal(r.status, 2, r.stderr);
        assert.match(r.stdout, /^line 4 \/id referenced: per_cli_mgr is still referenced: 1 people by manager_id \(per_cli_rep\)/m);
        assert.match(r.stdout, /^ {2}still named by 1 people by manager_id: per_cli_rep$/m);
      }
      assert.equal(await count(ws, 'people'), 2, 'the manager and the report stand');

      const deleted = run(['delete', '--workspace', ws, 'people', 'per_cli_mgr']);
      assert.equal(deleted.status, 2);
      assert.equal(deleted.stderr.trim().split('\n').length, 1, deleted.stderr);
      assert.match(deleted.stderr, /per_cli_mgr is still referenced: 1 people by manager_id \(per_cli_rep\)/);
      assert.equal(await count(ws, 'people'), 2);

      const out = join(dir, 'delete-manager-export.ndjson');
      assert.equal(run(['export', '--workspace', ws, '--output', out]).status, 0);
      for (const args of [['--dry-run'], [], ['--keep-timestamps']]) {
        const fresh = await h.workspace({ seed: false });
        const r = run(['import', '--workspace', fresh, out, ...args]);
        assert.equal(r.status, 0, `${args.join(' ')}: ${r.stdout} ${r.stderr}`);
      }
    });

    it('export | import --keep-timestamps - moves a workspace, and exporting the copy gives the same bytes', async () => {
      const a = await h.workspace();
      const b = await h.workspace({ seed: false });
      const out = join(dir, 'a.ndjson');
      const exported = run(['export', '--workspace', a, '--output', out]);
      assert.equal(exported.status, 0, exported.stderr);
      const original = readFileSync(out, 'utf8');
      const lines = original.trimEnd().split('\n');
      assert.ok(lines.length > 100, 'the seeded workspace has records');
      assert.match(exported.stdout, new RegExp(`^exported ${lines.length} records to `));

      const moved = pipeExportImport({ url: h.databaseUrl, ws: a }, { url: h.databaseUrl, ws: b });
      assert.equal(moved.status, 0, moved.stderr);
      const report = JSON.parse(moved.stdout);
      assert.equal(report.refused_count, 0);
      assert.equal(report.lines, lines.length);

      const copy = run(['export', '--workspace', b]);
      assert.equal(copy.status, 0, copy.stderr);
      assert.equal(copy.stdout, original, 'the copy exports byte for byte the same records');

      const some = run(['export', '--workspace', b, '--registers', 'vendors,locations']);
      assert.equal(some.status, 0, some.stderr);
      assert.deepEqual(
        [
          ...new Set(
            some.stdout
              .trimEnd()
              .split('\n')
              .map((l) => JSON.parse(l).register),
          ),
        ],
        ['locations', 'vendors'],
        'parents first',
      );
    });
  });
}

describe('moving a workspace from SQLite to PostgreSQL with export | import', { skip: DIALECTS.length < 2 }, () => {
  let from: Harness;
  let to: Harness;
  before(async () => {
    from = await createHarness('sqlite');
    to = await createHarness('postgres');
  });
  after(async () => {
    await from.close();
    await to.close();
  });

  it('the PostgreSQL deployment exports exactly the bytes the SQLite one did, and serves the same records', async () => {
    const a = await from.workspace();
    const b = await to.workspace({ seed: false });
    const original = cli(from.databaseUrl, ['export', '--workspace', a]);
    assert.equal(original.status, 0, original.stderr);
    const moved = pipeExportImport({ url: from.databaseUrl, ws: a }, { url: to.databaseUrl, ws: b });
    assert.equal(moved.status, 0, moved.stderr);
    assert.equal(JSON.parse(moved.stdout).refused_count, 0);
    const copy = cli(to.databaseUrl, ['export', '--workspace', b]);
    assert.equal(copy.status, 0, copy.stderr);
    assert.ok(original.stdout.length > 10_000);
    assert.equal(copy.stdout, original.stdout);
    const fromKey = (await from.key(a)).key;
    const toKey = (await to.key(b)).key;
    const page = async (x: Harness, k: string) => (await x.get('/api/v1/assets?limit=20', k)).json.data;
    assert.deepEqual(await page(to, toKey), await page(from, fromKey));
  });
});
