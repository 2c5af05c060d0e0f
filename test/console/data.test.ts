/**
 * The console's Data page: records per register and when last written, the last imports, and a
 * first load without a terminal: upload a file, read the dry run's report, confirm the import.
 * Uploads are multipart forms behind the session, the CSRF token and the same-origin check;
 * whatever the file holds reaches the page only as text.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { UPLOAD_LIMIT } from '../../src/console/pages/data.js';
import { type PageResponse, type SignedInAdmin, signedInAdmin } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const line = (register: string, record: Record<string, unknown>) => JSON.stringify({ register, op: 'upsert', record });
const site = (id: string) => ({ id, name: 'Harbour Office', kind: 'SITE', timezone: 'Europe/Berlin' });
const person = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  display_name: 'Ada Quill',
  given_name: 'Ada',
  family_name: 'Quill',
  work_email: 'ada.quill@example.com',
  job_title: 'Engineer',
  location_id: 'loc_con_hq',
  status: 'ACTIVE',
  start_date: '2024-02-01',
  ...extra,
});

interface Upload {
  name: string;
  type?: string;
  content: string | Buffer;
}

for (const dialect of DIALECTS) {
  describe(`console data page [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    let admin: SignedInAdmin;
    let key: string;
    before(async () => {
      h = await createHarness(dialect);
      ws = await h.workspace();
      admin = await signedInAdmin(h, ws);
      key = (await h.key(ws)).key;
    });
    after(() => h.close());

    /** A multipart form as a browser sends it (FormData serialised by the platform's own Request). */
    async function upload(
      url: string,
      file: Upload | undefined,
      fields: Record<string, string> = {},
      headers: Record<string, string> = {},
    ): Promise<PageResponse> {
      const form = new FormData();
      if (!('_csrf' in fields)) form.append('_csrf', admin.csrf);
      for (const [k, v] of Object.entries(fields)) if (v !== '') form.append(k, v);
      if (file)
        form.append(
          'file',
          new Blob([typeof file.content === 'string' ? file.content : new Uint8Array(file.content)], {
            type: file.type ?? 'application/x-ndjson',
          }),
          file.name,
        );
      const request = new Request('http://localhost/', { method: 'POST', body: form });
      const res = await h.app.inject({
        method: 'POST',
        url,
        headers: { cookie: admin.cookie, 'content-type': String(request.headers.get('content-type')), ...headers },
        payload: Buffer.from(await request.arrayBuffer()),
      });
      return { status: res.statusCode, headers: res.headers, body: res.body, location: String(res.headers.location ?? '') };
    }
    const sha256Of = (page: string) => /name="sha256" value="([0-9a-f]{64})"/.exec(page)?.[1] ?? '';
    const count = async (register: string) =>
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

    it('shows each register with its record count and when it was last written, and is in the navigation', async () => {
      const page = await admin.get('/console/data');
      assert.equal(page.status, 200);
      assert.match(page.body, /<a href="\/console\/data" aria-current="page">Data<\/a>/);
      const people = await count('people');
      assert.ok(people > 0);
      assert.match(
        page.body,
        new RegExp(`<th scope="row">People</th><td class="num">${people.toLocaleString('en')}</td><td><time datetime="`),
      );
      assert.match(page.body, /No imports yet/);
    });

    it('a checked file writes nothing and shows its report; confirming the same file imports it and the import is listed with the admin', async () => {
      const text = `${line('people', person('per_con_ada', { manager_id: 'per_con_bob' }))}\n${line('locations', site('loc_con_hq'))}\n${line('people', person('per_con_bob'))}\n`;
      const before = await count('people');
      const check = await upload('/console/data/check', { name: 'people.ndjson', content: text });
      assert.equal(check.status, 200, check.body);
      assert.match(check.body, /Report of the check/);
      assert.match(check.body, /<th scope="row">People<\/th><td class="num">2<\/td>/);
      assert.match(check.body, /No line refused/);
      assert.equal(await count('people'), before, 'the check wrote nothing');
      const sha256 = sha256Of(check.body);
      assert.ok(sha256);

      const confirmed = await upload('/console/data/import', { name: 'people.ndjson', content: text }, { sha256 });
      assert.equal(confirmed.status, 303, confirmed.body);
      assert.match(confirmed.location, /^\/console\/data\?imported=imp_/);
      assert.equal(await count('people'), before + 2);
      assert.equal((await h.get('/api/v1/people/per_con_ada', key)).json.manager_id, 'per_con_bob');

      const page = await admin.get(confirmed.location);
      assert.match(page.body, /Imported 3 lines: 3 created, 0 updated, 0 unchanged, 0 deleted\./);
      assert.match(page.body, /Dry run/);
      assert.match(page.body, /Imported<\/span>/);
      assert.equal(page.body.split(`console:${admin.email}`).length - 1, 2, 'both runs are listed with the admin');
      const audit = await h.services.database.db
        .selectFrom('audit_events')
        .select(['actor'])
        .where('action', '=', 'record.imported')
        .where('workspace_id', '=', ws)
        .execute();
      assert.deepEqual(
        audit.map((a) => a.actor),
        [`console:${admin.email}`],
      );
    });

    it("a check names a refused delete's referrers under its line, and an id written twice with both lines", async () => {
      const text = [
        line('locations', site('loc_con_hq')),
        line('people', person('per_con_mgr')),
        line('people', person('per_con_rep', { manager_id: 'per_con_mgr' })),
        line('people', person('per_con_rep', { manager_id: 'per_con_mgr', job_title: 'Lead' })),
        JSON.stringify({ register: 'people', op: 'delete', id: 'per_con_mgr' }),
      ].join('\n');
      const check = await upload('/console/data/check', { name: 'delete.ndjson', content: text });
      assert.equal(check.status, 200, check.body);
      assert.match(
        check.body,
        /<strong>Line 5<\/strong> <code>\/id<\/code> <code class="chip">referenced<\/code> per_con_mgr is still referenced/,
      );
      assert.match(check.body, /<li>Still named by 1 people by manager_id: per_con_rep<\/li>/);
      assert.match(check.body, /1 line writes an id an earlier line already wrote/);
      assert.match(check.body, /the last line for an id wins/);
      assert.match(check.body, /<strong>Line 4<\/strong> <code>per_con_rep<\/code> first written at line 3/);
    });

    it('a CSV file needs its register; its refused rows are reported with row number, pointer and reason', async () => {
      const csv =
        'id,name,category,status,annual_cost_minor,currency,contract_start_date,notice_period_days,auto_renews\n' +
        'ven_con_1,Paperclip,SOFTWARE,ACTIVE,1200,EUR,2025-01-01,30,true\n' +
        'ven_con_2,Staples,OTHER,ACTIVE,12,XYZ,2025-01-01,0,false\n';
      const noRegister = await upload('/console/data/check', { name: 'vendors.csv', type: 'text/csv', content: csv });
      assert.equal(noRegister.status, 400);
      assert.match(noRegister.body, /<p class="error" id="f-register-error">This looks like a CSV file: choose the register/);

      const typo = await upload(
        '/console/data/check',
        { name: 'v.csv', type: 'text/csv', content: 'id,nmae\nven_con_9,X\n' },
        { register: 'vendors' },
      );
      assert.equal(typo.status, 400);
      assert.match(typo.body, /role="alert">CSV column &quot;nmae&quot; is not a field of vendors; fields are: id, name,/);

      const check = await upload('/console/data/check', { name: 'vendors.csv', type: 'text/csv', content: csv }, { register: 'vendors' });
      assert.equal(check.status, 200);
      assert.match(check.body, /1 line is refused/);
      assert.match(
        check.body,
        /<strong>Line 3<\/strong> <code>\/record\/currency<\/code> <code class="chip">invalid_value<\/code> &quot;XYZ&quot; is not an ISO 4217/,
      );
      assert.match(check.body, /<option value="vendors" selected>/, 'the confirm form keeps the register');

      const other = await upload(
        '/console/data/import',
        { name: 'vendors.csv', type: 'text/csv', content: csv.replace('Paperclip', 'Paperclips') },
        { register: 'vendors', sha256: sha256Of(check.body) },
      );
      assert.equal(other.status, 200);
      assert.match(other.body, /This is not the file that was checked, so it was checked again: nothing was written/);
      assert.equal((await h.get('/api/v1/vendors/ven_con_1', key)).status, 404);

      const done = await upload(
        '/console/data/import',
        { name: 'vendors.csv', type: 'text/csv', content: csv },
        { register: 'vendors', sha256: sha256Of(check.body) },
      );
      assert.equal(done.status, 303);
      assert.equal((await h.get('/api/v1/vendors/ven_con_1', key)).json.annual_cost_minor, 1200);
      assert.match((await admin.get(done.location)).body, /1 refused \(listed below\)/);
    });

    it('refuses an upload from another site, without its CSRF token, or without a session, and writes nothing', async () => {
      const file = { name: 'x.ndjson', content: `${line('locations', site('loc_con_evil'))}\n` };
      const foreign = await upload('/console/data/import', file, {}, { origin: 'https://evil.example' });
      assert.equal(foreign.status, 403);
      assert.match(foreign.body, /Form refused/);
      const noToken = await upload('/console/data/check', file, { _csrf: '' });
      assert.equal(noToken.status, 403);
      const anonymous = await h.app.inject({
        method: 'POST',
        url: '/console/data/check',
        headers: { 'content-type': 'multipart/form-data; boundary=x' },
        payload: '--x\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nabc\r\n--x--\r\n',
      });
      assert.equal(anonymous.statusCode, 303);
      assert.match(String(anonymous.headers.location), /^\/console\/sign-in/);
      const imports = await h.services.database.db.selectFrom('record_imports').select('id').where('workspace_id', '=', ws).execute();
      const checked = await upload('/console/data/check', file);
      assert.equal(checked.status, 200, 'the same upload with the token and from this site is accepted');
      assert.equal(
        (await h.services.database.db.selectFrom('record_imports').select('id').where('workspace_id', '=', ws).execute()).length,
        imports.length + 1,
      );
      assert.equal((await h.get('/api/v1/locations/loc_con_evil', key)).status, 404);
    });

    it('a hostile file name and markup in a line reach the page only as text', async () => {
      const name = '<img src=x onerror=alert(1)>.ndjson';
      const content = `{"register":"<script>alert(1)</script>","op":"upsert","record":{}}\n${line('people', person('per_con_x', { '<b>bold</b>': 1 }))}\n`;
      const check = await upload('/console/data/check', { name, content });
      assert.equal(check.status, 200);
      assert.ok(!check.body.includes('<img src=x'), 'the file name is escaped');
      assert.ok(!check.body.includes('<script>alert'), 'the line is escaped');
      assert.ok(!check.body.includes('<b>bold'), 'the field name is escaped');
      assert.match(check.body, /&lt;img src=x onerror=alert\(1\)&gt;\.ndjson/);
      assert.match(check.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
      const page = await admin.get('/console/data');
      assert.ok(!page.body.includes('<script>alert') && !page.body.includes('<b>bold'));
    });

    it('a file over the limit is refused with the limit and a way onward; an empty form asks for a file', async () => {
      const big = await upload('/console/data/check', { name: 'big.ndjson', content: Buffer.alloc(UPLOAD_LIMIT + 1, 0x20) });
      assert.equal(big.status, 413);
      assert.match(big.body, /at most 20 MiB.*wsops import/s);
      const empty = await upload('/console/data/check', undefined);
      assert.equal(empty.status, 400);
      assert.match(empty.body, /<p class="error" id="f-file-error">Choose a file to load\.<\/p>/);
    });
  });
}
