/**
 * The internal write API is described by its own OpenAPI 3.1 document, served on the internal
 * listener at /internal/openapi.json and committed as openapi-internal.json (regenerate with
 * `npm run openapi`); the public document stays /api/v1 only.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { ACTIONS } from '../../src/actions/domain/index.js';
import { REGISTERS } from '../../src/registers/catalogue.js';
import { createWriter, type Writer } from './helpers.js';

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
    const routes = [...w.internal.printRoutes({ commonPrefix: false }).matchAll(/(\/\S*) \(([A-Z, ]+)\)/g)];
    assert.ok(routes.length >= 8, 'the route listing was read');
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
