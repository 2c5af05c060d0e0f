/**
 * The developer-facing documents: the OpenAPI document is valid 3.1, describes the webhooks
 * as well as /api/v1, is cacheable by ETag; every problem `type` resolves to a page of this
 * deployment that explains the code.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { ERROR_CATALOGUE } from '../src/errors.js';
import { ALL_EVENTS, EVENT_TYPES, SUBSCRIBABLE_EVENTS, TEST_EVENT, VERIFICATION_EVENT } from '../src/webhooks/events/event-types.js';
import { createHarness, type Harness } from './helpers/harness.js';

const BASE = 'https://api.example.test';

describe('developer documents', () => {
  let h: Harness;
  // biome-ignore lint/suspicious/noExplicitAny: the served document is arbitrary JSON
  let doc: any;
  before(async () => {
    h = await createHarness('sqlite', { WSOPS_BASE_URL: BASE });
    doc = JSON.parse((await h.app.inject({ url: '/developers/openapi.json' })).body);
  });
  after(() => h.close());

  it('the OpenAPI document is valid OpenAPI 3.1 (swagger-parser) and its info names the version, a contact and the licence', async () => {
    await SwaggerParser.validate(structuredClone(doc));
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.version, '1');
    assert.ok(doc.info.contact?.url?.startsWith(BASE), 'contact url on this deployment');
    assert.equal(doc.info.license?.identifier, 'MIT');
  });

  it('an invalid document is refused by the same validator (the check can fail)', async () => {
    const broken = structuredClone(doc);
    broken.webhooks['asset.assigned'].post.parameters[0].in = 'headers';
    await assert.rejects(SwaggerParser.validate(broken));
  });

  it('webhooks: one POST per event type (the eight, endpoint.verification and endpoint.test), each with its scope, headers and body schema', () => {
    assert.deepEqual(Object.keys(doc.webhooks).sort(), [...SUBSCRIBABLE_EVENTS, VERIFICATION_EVENT, TEST_EVENT].sort());
    for (const [type, declaration] of Object.entries(ALL_EVENTS)) {
      const op = doc.webhooks[type].post;
      assert.equal(op['x-wsops-scope'], declaration.scope, type);
      assert.deepEqual(
        op.parameters.map((p: { name: string; required: boolean }) => [p.name, p.required]),
        [
          ['X-Service-Event', true],
          ['X-Service-Delivery', true],
          ['X-Service-Signature', true],
          // Standard Webhooks, on the endpoints set to carry them.
          ['webhook-id', false],
          ['webhook-timestamp', false],
          ['webhook-signature', false],
        ],
      );
      assert.ok(op.responses['2XX'] && op.responses.default, `${type}: what the receiver should answer`);
      const schemaName = op.requestBody.content['application/json'].schema.$ref.split('/').pop();
      const body = doc.components.schemas[schemaName];
      assert.equal(body.properties.type.const, type);
      assert.equal(body.properties.api_version.const, '1');
      assert.deepEqual(Object.keys(body.properties.data.properties).sort(), Object.keys(declaration.data).sort());
    }
    assert.equal(doc.webhooks['asset.assigned'].post['x-wsops-scope'], EVENT_TYPES['asset.assigned'].scope);
  });

  it('webhook record members refer to the read API component schemas, so a field is described once', () => {
    const asset = doc.components.schemas.AssetAssignedEvent.properties.data.properties.asset;
    assert.deepEqual(asset.required, ['id', 'asset_tag', 'status']);
    assert.equal(asset.properties.asset_tag.$ref, '#/components/schemas/Asset/properties/asset_tag');
    assert.ok(doc.components.schemas.Asset.properties.asset_tag);
  });

  it('every problem type resolves to <base>/developers/errors#<code>, and that page explains the code and how to fix it', async () => {
    const res = await h.app.inject({ url: '/api/v1/assets' });
    assert.equal(res.statusCode, 401);
    const problem = JSON.parse(res.body);
    assert.equal(problem.type, `${BASE}/developers/errors#unauthorized`);
    const url = new URL(problem.type);
    const page = await h.app.inject({ url: url.pathname });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    for (const [code, e] of Object.entries(ERROR_CATALOGUE)) {
      assert.match(page.body, new RegExp(`<section id="${code}">`), code);
      assert.ok(page.body.includes(String(e.status)), code);
      assert.ok(e.meaning.length > 20 && e.fix.length > 10, `${code} has a meaning and a fix`);
    }
    assert.ok(!page.body.includes('about:blank') && !page.body.includes('wsops.dev'));
  });

  it('the OpenAPI document carries an ETag and answers 304 to If-None-Match', async () => {
    const first = await h.app.inject({ url: '/developers/openapi.json' });
    const etag = first.headers.etag as string;
    assert.match(etag, /^"[A-Za-z0-9_-]+"$/);
    const again = await h.app.inject({ url: '/developers/openapi.json', headers: { 'if-none-match': etag } });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    const weak = await h.app.inject({ url: '/developers/openapi.json', headers: { 'if-none-match': `"other", W/${etag}` } });
    assert.equal(weak.statusCode, 304);
    const stale = await h.app.inject({ url: '/developers/openapi.json', headers: { 'if-none-match': '"stale"' } });
    assert.equal(stale.statusCode, 200);
    assert.equal(stale.body, first.body);
  });
});
