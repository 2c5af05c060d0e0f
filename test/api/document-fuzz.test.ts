/**
 * A bounded fuzz driven by both OpenAPI documents (issue 59): requests made from each
 * operation's declared parameters, as a generated client or a schema-driven fuzzer makes them,
 * and every answer checked against the document (h.get validates status, content type and body
 * against the served document; the internal answers are checked here). What the schema admits
 * the server takes: a list is a 200, a detail a 200 or a 404, an export a 200. What the schema
 * cannot say (a date that does not exist, a cursor the server did not issue) is not generated.
 * WSOPS_PROPERTY_RUNS sets the runs per operation group (default 40).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { createWriter, TEST_TOKEN, type Writer } from '../writes/helpers.js';

const RUNS = Number(process.env.WSOPS_PROPERTY_RUNS ?? 40);

type Schema = {
  type?: string | string[];
  enum?: unknown[];
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  items?: Schema;
};
type Parameter = { $ref?: string; name: string; in: string; schema: Schema; style?: string; explode?: boolean };
type Doc = {
  paths: Record<string, { get?: { parameters?: Parameter[] } }>;
  components: { parameters?: Record<string, Parameter> };
};

/** An instant within `days` before `now` (and a minute after), written with a random offset of up to ±23:59. */
function instant(now: number, days: number): fc.Arbitrary<string> {
  return fc
    .tuple(fc.integer({ min: now - days * 86_400_000, max: now + 60_000 }), fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }))
    .map(([ms, offset]) => {
      const local = new Date(ms + offset * 60_000).toISOString().slice(0, -1);
      const sign = offset < 0 ? '-' : '+';
      const abs = Math.abs(offset);
      return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
    });
}

/**
 * A value the parameter's schema admits, as it goes in a query string; undefined where the
 * schema alone says nothing a valid value could be made from (an opaque cursor).
 */
function schemaValue(param: Parameter, now: number): fc.Arbitrary<string> | undefined {
  const schema = param.schema;
  if (param.name === 'cursor') return undefined;
  if (schema.type === 'array' && schema.items?.enum) {
    const items = schema.items.enum.map(String);
    return fc.subarray(items, { minLength: Math.max(1, schema.minItems ?? 1) }).map((v) => v.join(','));
  }
  if (schema.enum) return fc.constantFrom(...schema.enum.filter((v) => v !== null).map(String));
  if (schema.type === 'integer') return fc.integer({ min: schema.minimum ?? 0, max: schema.maximum ?? 1000 }).map(String);
  // Instants: recent ones, so a deletions feed or the events list stays inside its retention.
  if (schema.format === 'date-time') return instant(now, 20);
  // search: words of letters and digits (its pattern needs one), at most 10 (its description).
  if (param.name === 'search') {
    return fc
      .array(fc.stringMatching(/^[a-z0-9]{1,12}$/), { minLength: 1, maxLength: 10 })
      .map((words) => words.join(' '))
      .filter((s) => s.length <= (schema.maxLength ?? 200));
  }
  if (schema.pattern) {
    return fc
      .stringMatching(new RegExp(schema.pattern))
      .filter((s) => s.length >= (schema.minLength ?? 0) && s.length <= (schema.maxLength ?? Number.POSITIVE_INFINITY));
  }
  return undefined;
}

function resolve(doc: Doc, p: Parameter): Parameter {
  return p.$ref ? (doc.components.parameters?.[p.$ref.split('/').pop() ?? ''] as Parameter) : p;
}

for (const dialect of DIALECTS) {
  describe(`the public document, fuzzed [${dialect}]`, () => {
    let h: Harness;
    let key: string;
    let doc: Doc;
    before(async () => {
      h = await createHarness(dialect);
      const ws = await h.workspace();
      key = (await h.key(ws)).key;
      doc = JSON.parse((await h.app.inject({ method: 'GET', url: '/developers/openapi.json' })).body);
    });
    after(() => h.close());

    it('every GET with parameters its schemas admit is answered as the document says: a list 200, a detail 200 or 404', async () => {
      let operations = 0;
      for (const [template, item] of Object.entries(doc.paths)) {
        const params = (item.get?.parameters ?? []).map((p) => resolve(doc, p));
        const path = params.filter((p) => p.in === 'path');
        const query = params.filter((p) => p.in === 'query');
        const arbitraries: Record<string, fc.Arbitrary<string | undefined>> = {};
        for (const p of path) arbitraries[`path:${p.name}`] = schemaValue(p, h.clock()) ?? fc.constant('x');
        for (const p of query) {
          const value = schemaValue(p, h.clock());
          if (value) arbitraries[p.name] = fc.option(value, { nil: undefined });
        }
        operations++;
        await fc.assert(
          fc.asyncProperty(fc.record(arbitraries), async (values) => {
            let url = template;
            for (const p of path) url = url.replace(`{${p.name}}`, encodeURIComponent(values[`path:${p.name}`] ?? ''));
            const search = new URLSearchParams();
            for (const p of query) if (values[p.name] !== undefined) search.set(p.name, values[p.name] as string);
            const full = search.size ? `${url}?${search}` : url;
            const res = await h.get(full, key); // checked against the document by the harness
            const expected = path.length ? [200, 404] : [200];
            assert.ok(expected.includes(res.status), `${full}: ${res.status} ${res.body.slice(0, 300)}`);
          }),
          { numRuns: RUNS },
        );
      }
      assert.ok(operations >= 34, `${operations} operations fuzzed`);
    });
  });
}

describe('the internal document, fuzzed', () => {
  let w: Writer;
  let doc: Doc & { components: { schemas: Record<string, Schema & { properties?: Record<string, Schema> }> } };
  before(async () => {
    w = await createWriter('sqlite');
    doc = JSON.parse((await w.internal.inject({ url: '/internal/openapi.json' })).body);
  });
  after(async () => {
    await w.internal.close();
    await w.h.close();
  });

  it("the export's registers, as the schema admits them (a form array of register names), are a 200", async () => {
    const ws = await w.h.workspace();
    const param = resolve(doc, doc.paths['/internal/v1/workspaces/{workspace_id}/export']?.get?.parameters?.[0] as Parameter);
    assert.equal(param.name, 'registers');
    const value = schemaValue(param, w.h.clock());
    assert.ok(value);
    await fc.assert(
      fc.asyncProperty(value, async (registers) => {
        const res = await w.internal.inject({
          url: `/internal/v1/workspaces/${ws}/export?registers=${registers}`,
          headers: { authorization: `Bearer ${TEST_TOKEN}` },
        });
        assert.equal(res.statusCode, 200, `registers=${registers}: ${res.body.slice(0, 300)}`);
        const wanted = new Set(registers.split(','));
        for (const line of res.body.split('\n').filter(Boolean)) assert.ok(wanted.has(JSON.parse(line).register), line.slice(0, 100));
      }),
      { numRuns: RUNS },
    );
  });

  it('a PATCH of a person with members its schema admits (each field or null) is never refused for a type or a null', async () => {
    const ws = await w.h.workspace({ seed: false });
    await w.write('PUT', `${ws}/locations/loc_fuzz`, {
      id: 'loc_fuzz',
      name: 'Fuzz',
      kind: 'SITE',
      parent_id: null,
      timezone: 'UTC',
      address: null,
    });
    const person = {
      display_name: 'Ada Quill',
      given_name: 'Ada',
      family_name: 'Quill',
      work_email: 'ada@example.com',
      job_title: 'Engineer',
      location_id: 'loc_fuzz',
      status: 'ACTIVE',
      start_date: '2024-02-01',
    };
    assert.equal((await w.write('PUT', `${ws}/people/per_fuzz`, person)).status, 201);
    const schema = doc.components.schemas.PersonPatch;
    assert.ok(schema?.properties);
    const ajv = new Ajv2020({ strict: false });
    (addFormats as unknown as (a: Ajv2020) => void)(ajv);
    const admits = ajv.compile(schema);
    // Nullable members: null, or a value of the record itself (references stay whole).
    const nullable = Object.entries(schema.properties)
      .filter(([, s]) => [s.type].flat().includes('null'))
      .map(([name]) => name);
    const members: Record<string, fc.Arbitrary<string | null | undefined>> = {
      status: fc.option(fc.constantFrom('ACTIVE', 'INACTIVE'), { nil: undefined }),
      job_title: fc.option(fc.stringMatching(/^[A-Za-z][A-Za-z ]{0,30}$/), { nil: undefined }),
    };
    for (const name of nullable) members[name] = fc.option(fc.constant(null), { nil: undefined });
    const patch = fc.record(members);
    await fc.assert(
      fc.asyncProperty(patch, async (body) => {
        const clean = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
        assert.ok(admits(clean), `the schema admits ${JSON.stringify(clean)}`);
        const res = await w.write('PATCH', `${ws}/people/per_fuzz`, clean);
        assert.equal(res.status, 200, `${JSON.stringify(clean)}: ${res.body.slice(0, 300)}`);
      }),
      { numRuns: RUNS },
    );
  });
});
