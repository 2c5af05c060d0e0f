/**
 * The document matches the server to the letter (issue 27, point 5), as tools built from the
 * document (generated clients, fuzzers, linters) found it did not:
 * - a malformed percent-escape in the query is a 400 invalid_request, as in the path;
 * - 408, 414 and 431 are declared on every operation, and the real answers match them;
 * - the `search` and `updated_since` schemas carry the server's rules (pattern, description),
 *   and the pattern agrees with the server on each sample;
 * - the `scopes` tag and `GET /api/v1/scopes` are described;
 * - every query parameter the server refuses empty (`cursor=`) has a schema that refuses it too;
 * - a person's `team_id` says that it names a location of kind TEAM (issue 59).
 * Every response read with h.get is checked against the served document (harness.ts).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { INSTANT_PATTERN, SEARCH_PATTERN } from '../../src/developers/openapi.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { OpenApiValidator } from '../helpers/openapi-validator.js';

interface Operation {
  description?: string;
  responses: Record<string, { $ref?: string }>;
}
interface Doc {
  paths: Record<string, { get: Operation }>;
  tags: { name: string; description?: string }[];
  components: {
    parameters: Record<string, { schema: { pattern?: string } }>;
    responses: Record<string, { description: string }>;
  };
}

function rawExchange(port: number, bytes: string): Promise<{ status: number; contentType: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      data += d;
    });
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer within 5 s')));
    socket.on('close', () => {
      const [head = '', body = ''] = data.split('\r\n\r\n');
      const status = Number(head.split(' ')[1]);
      const contentType = /^content-type:\s*(.+)$/im.exec(head)?.[1]?.trim() ?? '';
      resolve({ status, contentType, body });
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`the contract to the letter [${dialect}]`, () => {
    let h: Harness;
    let key: string;
    let doc: Doc;
    before(async () => {
      h = await createHarness(dialect);
      const ws = await h.workspace({ seed: false });
      key = (await h.key(ws)).key;
      doc = JSON.parse((await h.app.inject({ method: 'GET', url: '/developers/openapi.json' })).body);
    });
    after(() => h.close());

    it('a malformed percent-escape in the query is a 400 invalid_request, as in the path; a valid one is read', async () => {
      for (const query of ['search=%ZZ', 'search=%', 'search=abc%4', 'search=%FF', 'updated_since=%ZZ', 'status=%E0%A4%A', 'x=%ZZ']) {
        const res = await h.get(`/api/v1/assets?${query}`, key);
        assert.equal(res.status, 400, query);
        assert.equal(res.json.code, 'invalid_request', query);
        assert.match(res.json.detail, /percent-escape is malformed or does not decode to UTF-8/);
      }
      const path = await h.get('/api/v1/assets/%ZZ', key);
      assert.equal(path.json.code, 'invalid_request', 'the same answer as in the path');
      assert.equal((await h.get('/api/v1/assets?search=%41st', key)).status, 200, '%41 is a valid escape');
      assert.equal((await h.get('/api/v1/assets?search=caf%C3%A9', key)).status, 200, 'UTF-8 escapes are valid');
    });

    it('every operation declares 408, 414 and 431 as problems; a real 414 and 431 match the document', async () => {
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const status of ['408', '414', '431']) assert.ok(item.get.responses[status], `${path} declares ${status}`);
      }
      assert.match(doc.components.responses.UriTooLong?.description ?? '', /uri_too_long/);
      assert.match(doc.components.responses.HeaderFieldsTooLarge?.description ?? '', /header_fields_too_large/);
      assert.match(doc.components.responses.RequestTimeout?.description ?? '', /request_timeout/);
      const long = await h.get(`/api/v1/assets/ast_${'a'.repeat(300)}`, key);
      assert.equal(long.status, 414, 'h.get checked it against the document');
      await h.app.listen({ port: 0, host: '127.0.0.1' });
      try {
        const port = (h.app.server.address() as net.AddressInfo).port;
        const big = await rawExchange(port, `GET /api/v1/assets HTTP/1.1\r\nHost: t\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
        assert.equal(big.status, 431);
        const validator = new OpenApiValidator(doc as unknown as ConstructorParameters<typeof OpenApiValidator>[0]);
        assert.ok(validator.check('GET', '/api/v1/assets', 431, big.contentType, JSON.parse(big.body)));
      } finally {
        await h.app.close();
      }
    });
  });
}

describe('the schema carries the rules the server applies', () => {
  let h: Harness;
  let key: string;
  let doc: Doc;
  before(async () => {
    h = await createHarness('sqlite');
    const ws = await h.workspace({ seed: false });
    key = (await h.key(ws)).key;
    doc = JSON.parse((await h.app.inject({ method: 'GET', url: '/developers/openapi.json' })).body);
  });
  after(() => h.close());

  it('search: the pattern (a letter or digit) says what the server accepts, sample by sample', async () => {
    const op = doc.paths['/api/v1/assets']?.get as unknown as { parameters: { name?: string; schema?: { pattern?: string } }[] };
    assert.equal(op.parameters.find((p) => p.name === 'search')?.schema?.pattern, SEARCH_PATTERN);
    const pattern = new RegExp(SEARCH_PATTERN, 'u');
    for (const sample of ['__', '-', '  ', '.,;', '\u0301', 'a', '_a_', 'é', '1', '٣', 'AST-0001', '東京']) {
      const res = await h.get(`/api/v1/assets?search=${encodeURIComponent(sample)}`, key);
      assert.equal(res.status === 200, pattern.test(sample), `${JSON.stringify(sample)}: server ${res.status}`);
    }
  });

  it('updated_since: no leap second, no year 0000, in the pattern; what it cannot say is in the description', async () => {
    const param = doc.components.parameters.updated_since as unknown as { description: string; schema: { pattern: string } };
    assert.equal(param.schema.pattern, INSTANT_PATTERN);
    assert.match(param.description, /leap second/);
    assert.match(param.description, /before 0001-01-01T00:00:00Z/);
    const pattern = new RegExp(INSTANT_PATTERN, 'u');
    const samples: [string, 'accepted' | 'pattern' | 'description'][] = [
      ['2026-11-21T08:00:00Z', 'accepted'],
      ['2026-11-21T09:00:00+01:00', 'accepted'],
      ['0001-01-01T00:00:00Z', 'accepted'],
      ['2016-12-31T23:59:60Z', 'pattern'],
      ['0000-06-01T00:00:00Z', 'pattern'],
      ['2026-11-21', 'pattern'],
      ['2026-02-30T00:00:00Z', 'description'],
      ['0001-01-01T00:00:00+01:00', 'description'],
    ];
    for (const [sample, expected] of samples) {
      const res = await h.get(`/api/v1/assets?updated_since=${encodeURIComponent(sample)}`, key);
      assert.equal(res.status, expected === 'accepted' ? 200 : 400, sample);
      assert.equal(
        pattern.test(sample),
        expected !== 'pattern',
        `${sample}: the pattern ${expected === 'pattern' ? 'refuses' : 'admits'} it`,
      );
    }
  });

  it('an empty query parameter (`cursor=`) is refused by the server and by the schema alike', async () => {
    const ajv = new Ajv2020({ strict: false });
    (addFormats as unknown as (a: Ajv2020) => void)(ajv);
    type Parameter = { $ref?: string; name?: string; in?: string; schema?: object };
    const resolve = (p: Parameter) => (p.$ref ? (doc.components.parameters[p.$ref.split('/').pop() ?? ''] as Parameter) : p);
    let checked = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      if (path.includes('{')) continue;
      const op = item.get as unknown as { parameters?: Parameter[] };
      for (const param of (op.parameters ?? []).map(resolve).filter((p) => p.in === 'query')) {
        const what = `${path}?${param.name}=`;
        assert.equal(ajv.validate(param.schema ?? {}, ''), false, `${what}: the schema admits the empty string`);
        const res = await h.get(`${path}?${param.name}=`, key);
        assert.equal(res.status, 400, `${what}: ${res.status}`);
        checked++;
      }
    }
    assert.ok(checked > 30, `${checked} parameters checked`);
  });

  it('console pages carry an icon link the CSP allows, so no browser asks for /favicon.ico (a 404 on every page)', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/console/sign-in' });
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /<link rel="icon" href="data:,">/);
    assert.match(String(res.headers['content-security-policy']), /img-src 'self' data:/);
  });

  it("teams are explained where a reader of the public document meets them: a person's team_id names a location of kind TEAM", () => {
    const schemas = (
      doc as unknown as { components: { schemas: Record<string, { properties: Record<string, { description?: string }> }> } }
    ).components.schemas;
    assert.match(schemas.Person?.properties.team_id?.description ?? '', /location of `kind` TEAM/);
    assert.match(schemas.Location?.properties.kind?.description ?? '', /`team_id` names a TEAM/);
  });

  it('the scopes tag and GET /api/v1/scopes are described', () => {
    assert.ok(doc.tags.find((t) => t.name === 'scopes')?.description);
    assert.match(doc.paths['/api/v1/scopes']?.get.description ?? '', /Needs no scope/);
  });
});
