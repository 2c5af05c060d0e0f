/**
 * The internal write API is described by its own OpenAPI 3.1 document, served on the internal
 * listener at /internal/openapi.json and committed as openapi-internal.json (regenerate with
 * `npm run openapi`); the public document stays /api/v1 only.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { ACTIONS } from '../../src/actions/domain/index.js';
import { REGISTERS } from '../../src/registers/catalogue.js';
import { EXPORT_ORDER } from '../../src/writes/export.js';
import { createWriter, person, site, TEST_TOKEN, type Writer } from './helpers.js';

describe('internal OpenAPI document', () => {
  let w: Writer;
  before(async () => {
    w = await createWriter('sqlite');
  });
  after(async () => {
    await w.internal.close();
    await w.h.close();
  });

  it('the committed openapi-internal.json is exactly what the internal listener serves (no token needed to read it)', async () => {
    const served = await w.internal.inject({ url: '/internal/openapi.json' });
    assert.equal(served.statusCode, 200);
    const committed = JSON.parse(readFileSync(new URL('../../openapi-internal.json', import.meta.url), 'utf8'));
    assert.deepEqual(JSON.parse(served.body), committed, 'run `npm run openapi` after changing a register');
  });

  it('is a valid OpenAPI 3.1 document with PUT, PATCH, DELETE and GET for every register, and import and export', async () => {
    const doc = JSON.parse((await w.internal.inject({ url: '/internal/openapi.json' })).body);
    await SwaggerParser.validate(structuredClone(doc));
    assert.equal(doc.openapi, '3.1.0');
    for (const r of REGISTERS) {
      const item = doc.paths[`/internal/v1/workspaces/{workspace_id}/${r.path}/{id}`];
      assert.deepEqual(
        Object.keys(item)
          .filter((k) => k !== 'parameters')
          .sort(),
        ['delete', 'get', 'patch', 'put'],
        r.path,
      );
      const write = doc.components.schemas[`${r.resource}Write`];
      assert.equal(write.additionalProperties, false, 'an unknown field is refused');
      assert.ok(!('created_at' in write.properties) && !('updated_at' in write.properties), "stamps are wsops's");
      for (const derived of Object.keys(r.derived ?? {})) assert.ok(!write.required.includes(derived), `${derived} is computed`);
    }
    assert.ok(doc.paths['/internal/v1/workspaces/{workspace_id}/import'].post);
    assert.ok(doc.paths['/internal/v1/workspaces/{workspace_id}/export'].get);
  });

  it("the export's registers: a comma-separated list of the register names, as documented and as the server reads it", async () => {
    const doc = JSON.parse((await w.internal.inject({ url: '/internal/openapi.json' })).body);
    const param = doc.paths['/internal/v1/workspaces/{workspace_id}/export'].get.parameters.find(
      (p: { name: string }) => p.name === 'registers',
    );
    assert.equal(param.style, 'form');
    assert.equal(param.explode, false, 'one value, comma-separated');
    assert.deepEqual(param.schema.items.enum, [...EXPORT_ORDER]);
    assert.equal(param.schema.minItems, 1);
    const ws = await w.h.workspace({ seed: false });
    const some = await w.internal.inject({
      url: `/internal/v1/workspaces/${ws}/export?registers=people,locations,people`,
      headers: { authorization: `Bearer ${TEST_TOKEN}` },
    });
    assert.equal(some.statusCode, 200, some.body);
    for (const bad of ['', 'people,,locations', 'people,', 'people, locations', 'nope']) {
      const res = await w.write('GET', `${ws}/export?registers=${encodeURIComponent(bad)}`);
      assert.equal(res.status, 400, `registers=${bad}`);
      assert.equal(res.json.code, 'invalid_parameter', `registers=${bad}`);
      assert.equal(res.json.param, 'registers', `registers=${bad}`);
    }
  });

  it("a PATCH body is each register's fields, all optional, null admitted exactly where the server takes it as removal", async () => {
    const doc = JSON.parse((await w.internal.inject({ url: '/internal/openapi.json' })).body);
    const ajv = new Ajv2020({ strict: false });
    (addFormats as unknown as (a: Ajv2020) => void)(ajv);
    for (const r of REGISTERS) {
      const op = doc.paths[`/internal/v1/workspaces/{workspace_id}/${r.path}/{id}`].patch;
      for (const type of ['application/merge-patch+json', 'application/json']) {
        assert.equal(op.requestBody.content[type].schema.$ref, `#/components/schemas/${r.resource}Patch`, `${r.path} ${type}`);
      }
      const patch = doc.components.schemas[`${r.resource}Patch`];
      const write = doc.components.schemas[`${r.resource}Write`];
      assert.deepEqual(Object.keys(patch.properties), Object.keys(write.properties), r.path);
      assert.equal(patch.required, undefined, `${r.path}: every field optional`);
      assert.equal(patch.additionalProperties, false, `${r.path}: an unknown field is refused`);
      for (const [name, field] of Object.entries(r.allFields)) {
        if (!(name in patch.properties)) continue;
        const removable = name !== 'id' && (field.nullable || field.kind === 'list' || field.kind === 'ids' || name in (r.derived ?? {}));
        assert.equal(ajv.validate(patch, { [name]: null }), removable, `${r.path}.${name}: null ${removable ? 'removes' : 'is refused'}`);
      }
    }
    // The server agrees, on a person: null on a nullable field and on a list-free required one.
    const ws = await w.h.workspace({ seed: false });
    assert.equal((await w.write('PUT', `${ws}/locations/loc_patch`, site('loc_patch'))).status, 201);
    assert.equal((await w.write('PUT', `${ws}/people/per_patch`, person('per_patch', 'loc_patch', { work_phone: '+49 1' }))).status, 201);
    const cleared = await w.write('PATCH', `${ws}/people/per_patch`, { work_phone: null });
    assert.equal(cleared.status, 200);
    assert.equal(cleared.json.work_phone, null);
    const refused = await w.write('PATCH', `${ws}/people/per_patch`, { job_title: null });
    assert.equal(refused.status, 422);
    assert.equal(ajv.validate(doc.components.schemas.PersonPatch, { job_title: null }), false);
  });

  it('asset.assign expected_return: what the schema admits the server takes, but for the edges its description names', async () => {
    const doc = JSON.parse((await w.internal.inject({ url: '/internal/openapi.json' })).body);
    const body = doc.paths['/internal/v1/actions/asset.assign'].post.requestBody.content['application/json'].schema.$ref.split('/').pop();
    const schema = doc.components.schemas[body].properties.expected_return;
    assert.match(schema.description, /in the future/);
    assert.match(schema.description, /before 0001-01-01T00:00:00Z or after 9999-12-31T23:59:59\.999Z/);
    const ajv = new Ajv2020({ strict: false });
    (addFormats as unknown as (a: Ajv2020) => void)(ajv);
    const ws = await w.h.workspace();
    const key = (await w.h.key(ws)).key;
    const asset = (await w.h.get('/api/v1/assets?status=AVAILABLE&limit=1', key)).json.data[0].id;
    const people = (await w.h.get('/api/v1/people?limit=100', key)).json.data as { id: string; status: string }[];
    const person = people.find((p) => p.status === 'ACTIVE')?.id;
    const act = (name: string, args: Record<string, unknown>) =>
      w.internal.inject({
        method: 'POST',
        url: `/internal/v1/actions/${name}`,
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ workspace_id: ws, ...args }),
      });
    const samples: [string, 'accepted' | 'schema' | 'description'][] = [
      ['2999-01-01T00:00:00Z', 'accepted'],
      ['2999-01-01T00:00:00+23:59', 'accepted'],
      ['2999-01-01T00:00:00-00:00', 'accepted'],
      ['2999-01-01T00:00:00.123456789+0530', 'accepted'],
      ['2999-01-01T00:00:00+24:00', 'schema'],
      ['2999-13-01T00:00:00Z', 'schema'],
      ['2999-01-01T24:00:00Z', 'schema'],
      ['2999-01-01T00:00:60Z', 'schema'],
      ['0000-01-01T00:00:00Z', 'schema'],
      ['2999-02-29T00:00:00Z', 'schema'],
      ['0001-01-01T00:00:00+01:00', 'description'],
      ['9999-12-31T23:59:59-01:00', 'description'],
      ['2001-01-01T00:00:00Z', 'description'],
    ];
    for (const [sample, expected] of samples) {
      assert.equal(
        ajv.validate(schema, sample),
        expected !== 'schema',
        `${sample}: the schema ${expected === 'schema' ? 'refuses' : 'admits'} it`,
      );
      const res = await act('asset.assign', { asset, person, expected_return: sample });
      assert.equal(res.statusCode, expected === 'accepted' ? 200 : 400, `${sample}: ${res.body}`);
      if (expected === 'accepted') assert.equal((await act('asset.return', { asset })).statusCode, 200);
      else assert.equal(JSON.parse(res.body).param, 'expected_return', sample);
    }
  });

  it("every domain action is an operation, its body the action's arguments, answering 409 when the state does not allow it", async () => {
    const doc = JSON.parse((await w.internal.inject({ url: '/internal/openapi.json' })).body);
    const actionPaths = Object.keys(doc.paths).filter((p) => p.startsWith('/internal/v1/actions/'));
    assert.deepEqual(
      actionPaths.sort(),
      Object.keys(ACTIONS)
        .map((name) => `/internal/v1/actions/${name}`)
        .sort(),
    );
    for (const action of Object.values(ACTIONS)) {
      const op = doc.paths[`/internal/v1/actions/${action.name}`].post;
      const body = doc.components.schemas[op.requestBody.content['application/json'].schema.$ref.split('/').pop()];
      assert.deepEqual(Object.keys(body.properties).sort(), ['workspace_id', ...action.options.map((o) => o.name)].sort(), action.name);
      assert.deepEqual(body.required.sort(), ['workspace_id', ...action.options.filter((o) => o.required).map((o) => o.name)].sort());
      assert.equal(body.additionalProperties, false, 'an unknown argument is a 400');
      for (const status of ['200', '400', '401', '403', '404', '409', '413', '414', '415', '429']) {
        assert.ok(op.responses[status], `${action.name} lists ${status}`);
      }
    }
  });

  it("the guide's domain actions section points at the document that holds them", () => {
    const readme = readFileSync(new URL('../../docs/guide/loading-data.md', import.meta.url), 'utf8');
    const section = readme.split('## Changing state: domain actions')[1]?.split('\n## ')[0] ?? '';
    assert.match(section, /operation of the internal OpenAPI document/);
    assert.doesNotMatch(section, /not part of the public API or the OpenAPI document/);
  });

  it('lists what the listener answers: 415 and 413 on every PUT and PATCH (412 and 422 on record writes), 414 wherever a path has a parameter, 400 everywhere', async () => {
    const doc = JSON.parse((await w.internal.inject({ url: '/internal/openapi.json' })).body);
    for (const [path, item] of Object.entries<Record<string, { responses: Record<string, unknown> }>>(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (method === 'parameters') continue;
        assert.ok(op.responses['400'] && op.responses['408'] && op.responses['431'], `${method} ${path}`);
        if (path.includes('{') || path.startsWith('/internal/v1/actions/')) assert.ok(op.responses['414'], `${method} ${path} 414`);
        if (method === 'put' || method === 'patch') {
          assert.ok(op.responses['415'] && op.responses['413'], `${method} ${path}`);
          // A record write is also conditional (If-Match) and judged against its register.
          if (REGISTERS.some((r) => path.endsWith(`/${r.path}/{id}`))) {
            assert.ok(op.responses['412'] && op.responses['422'], `${method} ${path} 412 and 422`);
          }
        }
      }
    }
    assert.ok(doc.paths['/readyz'].get.responses['503']);
  });

  it('every route the internal listener serves, with each of its methods but HEAD, is an operation of the document', async () => {
    const doc = JSON.parse((await w.internal.inject({ url: '/internal/openapi.json' })).body);
    // A document path with its parameters filled in, as a request would name it.
    const documented = Object.entries<Record<string, unknown>>(doc.paths).map(([path, item]) => ({
      path: path.replace(/\{[^}]+\}/g, 'x'),
      methods: Object.keys(item).filter((k) => k !== 'parameters'),
    }));
    // Fastify prints a tree: a route under another is printed after its parent's path, one level in.
    const routes: [string, string, string][] = [];
    const stack: string[] = [];
    for (const line of w.internal.printRoutes({ commonPrefix: false }).split('\n')) {
      const m = /^((?:│ {3}| {4})*)(?:├── |└── )?(\/\S*)(?: \(([A-Z, ]+)\))?$/.exec(line);
      if (!m) continue;
      const depth = (m[1] as string).length / 4;
      const path = `${depth > 0 ? (stack[depth - 1] ?? '') : ''}${m[2]}`;
      stack[depth] = path;
      if (m[3]) routes.push([line, path, m[3]]);
    }
    assert.ok(routes.length >= 8, 'the route listing was read');
    assert.ok(
      routes.some(([, path]) => path.endsWith('/webhook-endpoints/:id/filter')),
      'a route under another is read with its whole path',
    );
    for (const [, route, methods] of routes) {
      const pattern = new RegExp(`^${(route as string).replace(/:[a-z_]+/g, '[^/]+')}$`);
      for (const method of (methods as string).split(', ').filter((m) => m !== 'HEAD')) {
        assert.ok(
          documented.some((d) => pattern.test(d.path) && d.methods.includes(method.toLowerCase())),
          `${method} ${route} is in openapi-internal.json`,
        );
      }
    }
  });

  it('the public document describes /api/v1 only, and the public listener does not serve the internal one', async () => {
    const pub = JSON.parse((await w.h.app.inject({ url: '/developers/openapi.json' })).body);
    assert.ok(Object.keys(pub.paths).every((p) => p.startsWith('/api/v1/')));
    assert.equal((await w.h.app.inject({ url: '/internal/openapi.json' })).statusCode, 404);
  });
});
