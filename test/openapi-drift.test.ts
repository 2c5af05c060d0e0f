/** The committed openapi.json is exactly what the server serves: regenerate with `npm run openapi`. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { REGISTERS } from '../src/registers/catalogue.js';
import { createHarness, type Harness } from './helpers/harness.js';

describe('OpenAPI document', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness('sqlite', { WSOPS_BASE_URL: 'http://localhost:8080' });
  });
  after(() => h.close());

  it('the committed openapi.json matches /developers/openapi.json (run `npm run openapi` after changing a register or an event type)', async () => {
    const served = await h.app.inject({ url: '/developers/openapi.json' });
    assert.equal(served.statusCode, 200);
    const committed = JSON.parse(readFileSync(new URL('../openapi.json', import.meta.url), 'utf8'));
    assert.deepEqual(JSON.parse(served.body), committed);
  });

  it('is OpenAPI 3.1, covers /api/v1 only, and lists every enumeration of every register', async () => {
    const doc = JSON.parse((await h.app.inject({ url: '/developers/openapi.json' })).body);
    assert.equal(doc.openapi, '3.1.0');
    assert.ok(Object.keys(doc.paths).every((p: string) => p.startsWith('/api/v1/')));
    for (const r of REGISTERS) {
      assert.ok(doc.paths[`/api/v1/${r.path}`] && doc.paths[`/api/v1/${r.path}/{id}`], r.path);
      for (const [name, field] of Object.entries(r.fields)) {
        if (field.values)
          assert.deepEqual(
            doc.components.schemas[r.resource].properties[name].enum.filter((v: unknown) => v !== null),
            [...field.values],
          );
      }
    }
  });
});
