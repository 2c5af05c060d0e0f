/**
 * Request input never reaches Object.prototype (issue 56). Every route that takes JSON or a form
 * refuses a key or a SCIM path naming `__proto__`, `constructor` or `prototype` (any letter case)
 * in its own error shape, nothing is applied, Object.prototype gains nothing, and the server
 * serves the next request. The last test runs the original report on a real `wsops serve`: a
 * SCIM PATCH whose path set a property on Object.prototype, after which prom-client's GC
 * histogram threw on the new label at the next garbage collection and the process exited.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { systems } from '../../src/registers/systems.js';
import { csvOperations } from '../../src/writes/csv-operations.js';
import { importRecords } from '../../src/writes/import.js';
import { signedInAdmin } from '../helpers/console.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.js';
import { TEST_SECRET } from '../helpers/harness.js';
import { freePort, type Running, runWsops, startWsops, until, waitFor } from '../helpers/processes.js';
import { type Answer, ERROR, PATCH_OP, type ScimServer, startScimServer, USER } from '../scim/helpers.js';
import { createWriter, person, site, TEST_TOKEN, type Writer } from '../writes/helpers.js';

/** Object.prototype as it stood before any request of this file. */
const BASELINE = new Set(Object.getOwnPropertyNames(Object.prototype));
const PROBES = ['polluted', 'title', 'x', 'admin'];

/** Removes what a request added to Object.prototype, so that one failure does not spread to later tests. */
function cleanPrototype(): string[] {
  const added = Object.getOwnPropertyNames(Object.prototype).filter((n) => !BASELINE.has(n));
  for (const name of added) delete (Object.prototype as Record<string, unknown>)[name];
  return added;
}

/** Fails if Object.prototype gained a property. */
function assertUnpolluted(what: string): void {
  const added = cleanPrototype();
  assert.deepEqual(added, [], `${what} added ${added.join(', ')} to Object.prototype`);
  const fresh: Record<string, unknown> = {};
  for (const probe of PROBES) assert.equal(fresh[probe], undefined, `${what}: ({}).${probe} is defined`);
}

/**
 * `record` as JSON with `member` (raw JSON text: `"key": value`) in place of its own member of
 * that name: a key given twice would leave only its last value, and hide the hostile one.
 */
function withMember(record: Record<string, unknown>, member: string): string {
  const name = Object.keys(JSON.parse(`{${member}}`))[0] as string;
  const rest = JSON.stringify(Object.fromEntries(Object.entries(record).filter(([k]) => k !== name)));
  return rest === '{}' ? `{${member}}` : `{${member},${rest.slice(1)}`;
}

/** Members that name the prototype, as raw JSON (a JS object literal would set the prototype instead). */
const HOSTILE_MEMBERS = [
  '"__proto__": {"polluted": "yes"}',
  '"constructor": {"prototype": {"polluted": "yes"}}',
  '"prototype": {"polluted": "yes"}',
  '"__PROTO__": {"polluted": "yes"}',
  '"Constructor": {"polluted": "yes"}',
  '"address": {"__proto__": {"polluted": "yes"}}',
  '"address": [{"constructor": {"prototype": {"polluted": "yes"}}}]',
];

function assertProblem(res: { status?: number; statusCode?: number; headers: Record<string, unknown>; body: string }, what: string): void {
  const status = res.status ?? res.statusCode ?? 0;
  assert.ok(status >= 400 && status < 500, `${what}: ${status} ${res.body.slice(0, 300)}`);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/, what);
  const p = JSON.parse(res.body);
  assert.equal(p.status, status, what);
  assert.equal(typeof p.detail, 'string', what);
}

function assertScimError(res: Answer, what: string, scimTypes: readonly string[]): void {
  assert.equal(res.status, 400, `${what}: ${res.text.slice(0, 300)}`);
  assert.deepEqual(res.json.schemas, [ERROR], what);
  assert.equal(res.json.status, '400', what);
  assert.ok(scimTypes.includes(res.json.scimType), `${what}: scimType ${res.json.scimType}, detail ${res.json.detail}`);
}

/** The exact PATCH of the report. */
const REPORTED_PATCH = {
  schemas: [PATCH_OP],
  Operations: [{ op: 'add', path: '__proto__.polluted', value: 'yes' }],
};

/** A file's bytes as the import reads them. */
async function* bytes(text: string): AsyncGenerator<Buffer> {
  yield Buffer.from(text);
}

const HOSTILE_PATHS = [
  '__proto__.polluted',
  'constructor.prototype.title',
  '__PROTO__.x',
  'name.__proto__.x',
  'Prototype',
  'name.constructor',
  'emails[__proto__ eq "x"].value',
  'emails[type eq "work"].__proto__',
  'emails[type eq "work" and constructor.prototype pr].value',
  'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:__proto__.polluted',
  'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.__proto__',
  'urn:ietf:params:scim:schemas:core:2.0:User:constructor.prototype.polluted',
  'addresses[type eq "work"].__proto__',
];

for (const dialect of DIALECTS) {
  describe(`prototype pollution: the internal listener [${dialect}]`, () => {
    let w: Writer;
    let ws: string;
    before(async () => {
      w = await createWriter(dialect);
      ws = await w.h.workspace({ seed: false });
      assert.equal((await w.write('PUT', `${ws}/locations/loc_pp_hq`, site('loc_pp_hq'))).status, 201);
    });
    afterEach(() => cleanPrototype());
    after(async () => {
      await w.h.close();
      assertUnpolluted('the internal listener');
    });
    const inject = (method: 'POST' | 'PUT', url: string, payload: string, type = 'application/json') =>
      w.internal.inject({ method, url, headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': type }, payload });

    it('a record PUT with a member naming the prototype is a 400 problem and writes nothing', async () => {
      for (const member of HOSTILE_MEMBERS) {
        const res = await w.write('PUT', `${ws}/locations/loc_pp_new`, withMember(site('loc_pp_new'), member));
        assertProblem(res, `PUT ${member}`);
        assertUnpolluted(`PUT ${member}`);
      }
      assert.equal((await w.write('GET', `${ws}/locations/loc_pp_new`)).status, 404, 'nothing was written');
      assert.equal((await w.write('PUT', `${ws}/locations/loc_pp_new`, site('loc_pp_new'))).status, 201, 'a normal PUT still works');
    });

    it('a merge patch (application/merge-patch+json and application/json) naming the prototype is a 400 problem and changes nothing', async () => {
      const before = (await w.write('GET', `${ws}/locations/loc_pp_hq`)).json;
      for (const member of HOSTILE_MEMBERS) {
        for (const type of ['application/merge-patch+json', 'application/json']) {
          const res = await w.write('PATCH', `${ws}/locations/loc_pp_hq`, withMember({ name: 'Renamed' }, member), {
            'content-type': type,
          });
          assertProblem(res, `PATCH ${type} ${member}`);
          assertUnpolluted(`PATCH ${type} ${member}`);
        }
      }
      assert.deepEqual((await w.write('GET', `${ws}/locations/loc_pp_hq`)).json, before, 'nothing was changed');
      const ok = await w.write('PATCH', `${ws}/locations/loc_pp_hq`, { name: 'Harbour HQ' });
      assert.equal(ok.status, 200, ok.body);
      assert.equal(ok.json.name, 'Harbour HQ');
    });

    it('an NDJSON import refuses each line naming the prototype, by number, and applies the others', async () => {
      const lines = [
        JSON.stringify({ register: 'locations', op: 'upsert', record: site('loc_pp_a') }),
        `{"register": "locations", "op": "upsert", "record": ${withMember(site('loc_pp_b'), '"__proto__": {"polluted": "yes"}')}}`,
        `{"register": "locations", "op": "upsert", "record": ${withMember(site('loc_pp_c'), '"constructor": {"prototype": {"polluted": "yes"}}')}}`,
        `{"__proto__": {"polluted": "yes"}, "register": "locations", "op": "upsert", "record": ${JSON.stringify(site('loc_pp_d'))}}`,
        `{"register": "locations", "op": "upsert", "record": ${withMember(site('loc_pp_e'), '"address": {"PROTOTYPE": {"polluted": "yes"}}')}}`,
        `{"register": "locations", "op": "delete", "id": "loc_pp_a", "Constructor": 1}`,
        JSON.stringify({ register: 'locations', op: 'upsert', record: site('loc_pp_f') }),
      ];
      const res = await inject('POST', `/internal/v1/workspaces/${ws}/import`, `${lines.join('\n')}\n`, 'application/x-ndjson');
      assert.equal(res.statusCode, 200, res.body);
      assertUnpolluted('the NDJSON import');
      const report = JSON.parse(res.body);
      assert.deepEqual(
        report.refused.map((r: { line: number; pointer: string }) => [r.line, r.pointer]),
        [
          [2, '/record/__proto__'],
          [3, '/record/constructor'],
          [4, '/__proto__'],
          [5, '/record/address/PROTOTYPE'],
          [6, '/Constructor'],
        ],
      );
      assert.deepEqual(report.counts.locations.upsert, { created: 2, updated: 0, unchanged: 0 });
      for (const id of ['loc_pp_a', 'loc_pp_f']) assert.equal((await w.write('GET', `${ws}/locations/${id}`)).status, 200);
      for (const id of ['loc_pp_b', 'loc_pp_c', 'loc_pp_d', 'loc_pp_e'])
        assert.equal((await w.write('GET', `${ws}/locations/${id}`)).status, 404);
    });

    it('a CSV import refuses a row whose list cell names the prototype, and a header naming it as an unknown column', async () => {
      const header = 'id,name,category,status,access';
      const grant = (extra: string) =>
        `"[{""person_id"":""per_pp_1"",""level"":""USER"",""granted_at"":""2025-01-01T00:00:00Z""${extra}}]"`;
      assert.equal((await w.write('PUT', `${ws}/people/per_pp_1`, person('per_pp_1', 'loc_pp_hq'))).status, 201);
      const csv = [
        header,
        `sys_pp_1,Mail,PRODUCTIVITY,ACTIVE,${grant('')}`,
        `sys_pp_2,Wiki,PRODUCTIVITY,ACTIVE,${grant(',""__proto__"":{""polluted"":""yes""}')}`,
        `sys_pp_3,Chat,PRODUCTIVITY,ACTIVE,${grant(',""constructor"":{""prototype"":{""polluted"":""yes""}}')}`,
        '',
      ].join('\n');
      const report = await importRecords(w.h.services, ws, csvOperations(bytes(csv), systems), { actor: 'operator' });
      assertUnpolluted('the CSV import');
      assert.deepEqual(
        report.refused.map((r) => [r.line, r.pointer]),
        [
          [3, '/record/access/0/__proto__'],
          [4, '/record/access/0/constructor'],
        ],
      );
      assert.equal(report.counts.systems?.upsert.created, 1);
      for (const bad of ['__proto__', 'constructor', 'Prototype']) {
        const file = `id,name,category,status,${bad}\nsys_pp_9,Mail,PRODUCTIVITY,ACTIVE,x\n`;
        await assert.rejects(importRecords(w.h.services, ws, csvOperations(bytes(file), systems), { actor: 'operator' }), (err: Error) =>
          err.message.includes(`CSV column "${bad}" is not a field of systems`),
        );
        assertUnpolluted(`a CSV column ${bad}`);
      }
    });

    it('a domain action and an endpoint setting naming the prototype are 400 problems', async () => {
      const action = { workspace_id: ws, asset: 'ast_none', person: 'per_pp_1' };
      for (const member of HOSTILE_MEMBERS) {
        const res = await inject('POST', '/internal/v1/actions/asset.assign', withMember(action, member));
        assertProblem(res, `action ${member}`);
        assertUnpolluted(`action ${member}`);
        const setting = await inject(
          'PUT',
          `/internal/v1/workspaces/${ws}/webhook-endpoints/whe_none/signatures`,
          withMember({ standard_webhooks: true }, member),
        );
        assertProblem(setting, `endpoint setting ${member}`);
        assert.equal(setting.statusCode, 400, 'refused before the endpoint is looked up');
        assertUnpolluted(`endpoint setting ${member}`);
      }
      const health = await w.internal.inject({ method: 'GET', url: '/healthz' });
      assert.equal(health.statusCode, 200);
    });
  });

  describe(`prototype pollution: SCIM and the console [${dialect}]`, () => {
    let s: ScimServer;
    let id: string;
    const good = { schemas: [USER], userName: 'proto.target@example.com', name: { givenName: 'Pro', familyName: 'To' }, title: 'Clerk' };
    before(async () => {
      s = await startScimServer(dialect);
      const created = await s.scim('POST', '/Users', good);
      assert.equal(created.status, 201, created.text);
      id = created.json.id;
    });
    afterEach(() => cleanPrototype());
    after(async () => {
      await s.close();
      assertUnpolluted('SCIM and the console');
    });

    it('the reported PATCH is 400 invalidPath, applies nothing, and the server serves on', async () => {
      const before = (await s.scim('GET', `/Users/${id}`)).json;
      assertScimError(await s.scim('PATCH', `/Users/${id}`, REPORTED_PATCH), 'the reported PATCH', ['invalidPath']);
      assertUnpolluted('the reported PATCH');
      assert.deepEqual((await s.scim('GET', `/Users/${id}`)).json, before);
    });

    it('every PATCH path naming the prototype, in any letter case and inside filters, is 400 invalidPath', async () => {
      const before = (await s.scim('GET', `/Users/${id}`)).json;
      for (const path of HOSTILE_PATHS) {
        for (const op of ['add', 'replace', 'remove']) {
          const body = { schemas: [PATCH_OP], Operations: [{ op, path, value: op === 'remove' ? undefined : 'yes' }] };
          assertScimError(await s.scim('PATCH', `/Users/${id}`, body), `${op} ${path}`, ['invalidPath']);
          assertUnpolluted(`${op} ${path}`);
        }
      }
      // A refused operation after a good one: nothing of the PATCH is applied.
      const mixed = {
        schemas: [PATCH_OP],
        Operations: [
          { op: 'replace', path: 'title', value: 'Changed' },
          { op: 'add', path: 'constructor.prototype.title', value: 'yes' },
        ],
      };
      assertScimError(await s.scim('PATCH', `/Users/${id}`, mixed), 'a good operation then a hostile one', ['invalidPath']);
      assert.deepEqual((await s.scim('GET', `/Users/${id}`)).json, before, 'nothing was applied');
    });

    it('value-only operations and values whose keys name the prototype are refused (invalidSyntax or invalidPath)', async () => {
      const before = (await s.scim('GET', `/Users/${id}`)).json;
      const raw = (operation: string) => `{"schemas": ["${PATCH_OP}"], "Operations": [${operation}]}`;
      const cases = [
        '{"op": "add", "value": {"__proto__": {"polluted": "yes"}}}',
        '{"op": "replace", "value": {"constructor": {"prototype": {"polluted": "yes"}}}}',
        '{"op": "add", "value": {"Prototype": {"polluted": "yes"}}}',
        '{"op": "add", "value": {"__proto__.polluted": "yes"}}',
        '{"op": "add", "value": {"name.__PROTO__.polluted": "yes"}}',
        '{"op": "add", "value": {"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:constructor.prototype.polluted": "yes"}}',
        '{"op": "add", "value": {"title": "x", "name": {"givenName": "A", "constructor.prototype.polluted": "yes"}}}',
        '{"op": "add", "path": "name", "value": {"givenName.__proto__.polluted": "yes"}}',
        '{"op": "add", "path": "emails", "value": [{"value": "proto.target@example.com", "type": "work", "__proto__": {"polluted": "yes"}}]}',
        '{"op": "add", "value": {"addresses": [{"Constructor": {"prototype": {"polluted": "yes"}}}]}}',
      ];
      for (const operation of cases) {
        for (const type of ['application/scim+json', 'application/json']) {
          const res = await s.scim('PATCH', `/Users/${id}`, raw(operation), undefined, { 'content-type': type });
          assertScimError(res, `${type} ${operation}`, ['invalidSyntax', 'invalidPath']);
          assertUnpolluted(`${type} ${operation}`);
        }
      }
      assert.deepEqual((await s.scim('GET', `/Users/${id}`)).json, before, 'nothing was applied');
    });

    it('a POST or PUT of a User with a member naming the prototype is 400 invalidSyntax and writes nothing', async () => {
      const total = (await s.scim('GET', '/Users?count=0')).json.totalResults;
      const before = (await s.scim('GET', `/Users/${id}`)).json;
      const user = { ...good, userName: 'proto.new@example.com' };
      const members = [
        ...HOSTILE_MEMBERS.slice(0, 5),
        '"name": {"givenName": "A", "__proto__": {"polluted": "yes"}}',
        '"emails": [{"value": "proto.new@example.com", "type": "work", "constructor": {"prototype": {"polluted": "yes"}}}]',
        '"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"prototype": {"polluted": "yes"}}',
      ];
      for (const member of members) {
        assertScimError(await s.scim('POST', '/Users', withMember(user, member)), `POST ${member}`, ['invalidSyntax']);
        assertUnpolluted(`POST ${member}`);
        const put = withMember(good, member);
        assertScimError(await s.scim('PUT', `/Users/${id}`, put), `PUT ${member}`, ['invalidSyntax']);
        assertUnpolluted(`PUT ${member}`);
      }
      assert.equal((await s.scim('GET', '/Users?count=0')).json.totalResults, total, 'nothing was created');
      assert.deepEqual((await s.scim('GET', `/Users/${id}`)).json, before, 'nothing was replaced');
    });

    it('after all of it, a normal PATCH applies and the user is served', async () => {
      const ok = await s.scim('PATCH', `/Users/${id}`, {
        schemas: [PATCH_OP],
        Operations: [
          { op: 'replace', path: 'title', value: 'Lead' },
          { op: 'replace', value: { 'name.givenName': 'Proto', active: true } },
        ],
      });
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.json.title, 'Lead');
      assert.equal(ok.json.name.givenName, 'Proto');
      assertUnpolluted('a normal PATCH');
    });

    it('console forms (keys, endpoints) and a console JSON body naming the prototype get the console error page', async () => {
      const admin = await signedInAdmin(s.h, s.ws);
      const forms: Record<string, Record<string, string | string[]>> = {
        '/console/keys': { name: 'Proto key', scopes: ['people:read'], environment: 'test', days: '30', allowed_ips: '' },
        '/console/webhooks/new': { url: 'https://hooks.example.com/wsops', scopes: ['people:read'], events: ['record.updated'] },
      };
      const keysBefore = await admin.get('/console/keys');
      for (const [url, form] of Object.entries(forms)) {
        for (const name of ['__proto__', 'constructor', 'prototype', '__PROTO__', 'Constructor']) {
          const res = await admin.post(url, { ...form, [name]: 'yes' });
          assert.equal(res.status, 400, `${url} ${name}: ${res.body.slice(0, 300)}`);
          assert.match(String(res.headers['content-type']), /^text\/html/);
          assert.match(res.body, /Request refused/);
          assertUnpolluted(`${url} ${name}`);
        }
      }
      const json = await s.h.app.inject({
        method: 'POST',
        url: '/console/security/passkeys',
        headers: { cookie: admin.cookie, 'content-type': 'application/json', 'x-csrf-token': admin.csrf },
        payload: '{"_csrf": "x", "constructor": {"prototype": {"polluted": "yes"}}}',
      });
      assert.equal(json.statusCode, 400, json.body.slice(0, 300));
      assert.match(String(json.headers['content-type']), /^text\/html/);
      assertUnpolluted('a console JSON body');
      const keysAfter = await admin.get('/console/keys');
      assert.equal(keysAfter.status, 200);
      assert.equal(keysAfter.body.split('Proto key').length, keysBefore.body.split('Proto key').length, 'no key was created');
    });
  });

  describe(`prototype pollution: the reported crash on a real server [${dialect}]`, () => {
    let db: TestDatabase;
    let server: Running;
    let pub: string;
    let internal: string;
    before(async () => {
      db = await createTestDatabase(dialect);
      const env = {
        WSOPS_DATABASE_URL: db.url,
        WSOPS_SECRET: TEST_SECRET,
        WSOPS_OPERATOR_TOKEN: TEST_TOKEN,
        WSOPS_LOG_LEVEL: 'warn',
      };
      const [port, internalPort] = [await freePort(), await freePort()];
      server = startWsops(['serve', '--port', String(port)], { ...env, WSOPS_INTERNAL_PORT: String(internalPort) });
      pub = `http://127.0.0.1:${port}`;
      internal = `http://127.0.0.1:${internalPort}`;
      await waitFor(`${pub}/healthz`, server);
      await waitFor(`${internal}/healthz`, server);
    });
    after(async () => {
      await server?.stop();
      await db?.drop();
    });

    /** A request to the server; a server that stopped answering fails the test with its exit and its log. */
    const served = async (url: string, init?: RequestInit): Promise<Response> => {
      try {
        return await fetch(url, init);
      } catch (err) {
        await until(() => server.child.exitCode !== null, 2000, 'the exit').catch(() => undefined);
        const output = server.output().slice(-3000);
        throw new Error(
          `the server stopped answering (${(err as Error).message}); exit code ${server.child.exitCode}; its log:\n${output}`,
        );
      }
    };

    /** Garbage collections prom-client has observed in the server so far. */
    const collections = async () => {
      const text = await (await served(`${internal}/metrics`)).text();
      return [...text.matchAll(/^nodejs_gc_duration_seconds_count\{[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
    };

    it('the SCIM PATCH of the report is refused and the process keeps serving through the next garbage collections', async () => {
      const env = { WSOPS_DATABASE_URL: db.url, WSOPS_SECRET: TEST_SECRET };
      const ws = JSON.parse(await runWsops(['workspace', 'create', '--name', 'Proto', '--json'], env)).id;
      const put = await fetch(`${internal}/internal/v1/workspaces/${ws}/locations/loc_pp_hq`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(site('loc_pp_hq')),
      });
      assert.equal(put.status, 201, await put.text());
      const token = JSON.parse(
        await runWsops(['scim', 'token', 'create', '--workspace', ws, '--location', 'loc_pp_hq', '--json'], env),
      ).token;
      const scim = (method: string, path: string, body?: unknown) =>
        fetch(`${pub}/scim/v2${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      const created = await scim('POST', '/Users', { schemas: [USER], userName: 'crash.test@example.com' });
      assert.equal(created.status, 201, await created.clone().text());
      const userId = (await created.json()).id;

      const gcBefore = await collections();
      const answer = await scim('PATCH', `/Users/${userId}`, REPORTED_PATCH);
      const text = await answer.text();

      // Garbage collections are made to happen (each large body is parsed whole, then refused), and
      // the server must answer after prom-client has observed more of them.
      const big = JSON.stringify({ ...site('loc_pp_big'), notes: 'n'.repeat(900_000) });
      await until(
        async () => {
          assert.equal((await served(`${pub}/healthz`)).status, 200);
          for (let i = 0; i < 5; i++) {
            await served(`${internal}/internal/v1/workspaces/${ws}/locations/loc_pp_big`, {
              method: 'PUT',
              headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
              body: big,
            });
          }
          return (await collections()) >= gcBefore + 3;
        },
        20_000,
        'three more garbage collections observed by prom-client',
      );
      // Judged after the collections, so that a server the PATCH stops fails as such.
      assert.equal(answer.status, 400, text);
      assert.equal(JSON.parse(text).scimType, 'invalidPath');
      // Still serving, and the user is as it was.
      const read = await served(`${pub}/scim/v2/Users/${userId}`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(read.status, 200);
      assert.equal((await read.json()).title, '');
      assert.equal(server.child.exitCode, null);
    });
  });
}
