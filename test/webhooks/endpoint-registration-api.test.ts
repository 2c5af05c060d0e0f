/**
 * Registering webhook endpoints and event destinations on the internal listener (issue 61: "a
 * workspace admin registers (console, CLI, internal API)"): the same rules as the CLI and the
 * console, the signing secret in the 201 answer only, a broker password in no answer, the audit
 * trail, and every answer as the internal OpenAPI document describes it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { FastifyInstance } from 'fastify';
import { listAudit } from '../../src/audit/audit.js';
import { buildInternalOpenApi } from '../../src/developers/internal-openapi.js';
import { buildInternalApp } from '../../src/http/internal-app.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const TOKEN = 'op-token-0123456789abcdef-0123456789abcdef';

for (const dialect of DIALECTS) {
  describe(`endpoint registration on the internal API [${dialect}]`, () => {
    let h: Harness;
    let internal: FastifyInstance;
    let base: string;
    const ajv = new Ajv2020({ strict: false });
    const doc = buildInternalOpenApi('http://127.0.0.1') as { components: { schemas: Record<string, unknown> } };
    ajv.addSchema({ $id: 'doc', components: doc.components });
    const conforms = (schema: string, value: unknown) => {
      const ok = ajv.validate({ $ref: `doc#/components/schemas/${schema}` }, value);
      assert.ok(ok, `${schema}: ${ajv.errorsText()}`);
    };

    before(async () => {
      h = await createHarness(dialect, { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true', WSOPS_OPERATOR_TOKEN: TOKEN });
      internal = buildInternalApp(h.services);
      base = await internal.listen({ port: 0, host: '127.0.0.1' });
    });
    after(async () => {
      await internal.close();
      await h.close();
    });

    const post = (ws: string, body: string, token = TOKEN) =>
      fetch(`${base}/internal/v1/workspaces/${ws}/webhook-endpoints`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
      });
    const list = async (ws: string) => {
      const res = await fetch(`${base}/internal/v1/workspaces/${ws}/webhook-endpoints`, { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(res.status, 200);
      return (await res.text()) as string;
    };

    it('registers a webhook: 201 with the secret once, unverified, the list never shows the secret, audited as the operator', async () => {
      const ws = await h.workspace({ seed: false });
      assert.equal((await post(ws, '{}', 'wrong-token')).status, 401);
      const res = await post(
        ws,
        JSON.stringify({ url: 'http://127.0.0.1:9/hook', scopes: ['assets:read'], events: ['asset.assigned'], standard_webhooks: true }),
      );
      const text = await res.text();
      assert.equal(res.status, 201, text);
      const created = JSON.parse(text);
      conforms('RegisteredWebhookEndpoint', created);
      assert.match(created.secret, /^whsec_/);
      assert.equal(created.status, 'unverified');
      assert.equal(created.kind, 'https');
      assert.equal(created.standard_webhooks, true);
      assert.match(created.verification_event_id, /^evt_/);
      const listed = await list(ws);
      assert.ok(!listed.includes(created.secret), 'the list never shows the secret');
      const { data } = JSON.parse(listed);
      assert.deepEqual(
        data.map((e: { id: string }) => e.id),
        [created.id],
      );
      for (const e of data) conforms('WebhookEndpoint', e);
      const [entry] = await listAudit(h.services.database.db, ws, { limit: 1 });
      assert.equal(entry?.action, 'endpoint.created');
      assert.equal(entry?.actor, 'operator');
    });

    it('registers a RabbitMQ destination: the password is in no answer, the exchange and routing key are', async () => {
      const ws = await h.workspace({ seed: false });
      const res = await post(
        ws,
        JSON.stringify({
          url: 'amqp://wsops:s3cret-Pa55@127.0.0.1:5672/%2F',
          scopes: ['assets:read'],
          events: ['asset.assigned'],
          exchange: 'wsops.events',
          routing_key: 'ws.{workspace}.{type}',
          filter: { data: { asset: { status: 'ASSIGNED' } } },
        }),
      );
      const text = await res.text();
      assert.equal(res.status, 201, text);
      assert.ok(!text.includes('s3cret-Pa55'), 'the password is never answered');
      const created = JSON.parse(text);
      assert.equal(created.kind, 'rabbitmq');
      assert.equal(created.exchange, 'wsops.events');
      assert.equal(created.routing_key, 'ws.{workspace}.{type}');
      assert.deepEqual(created.filter, { data: { asset: { status: 'ASSIGNED' } } });
      assert.ok(!(await list(ws)).includes('s3cret-Pa55'));
    });

    it('refuses a bad registration with a 400 naming the member and the rule, and registers nothing', async () => {
      const ws = await h.workspace({ seed: false });
      const good = { url: 'http://127.0.0.1:9/hook', scopes: ['assets:read'], events: ['asset.assigned'] };
      for (const [body, param, detail] of [
        ['[]', 'url', /must be a JSON object/],
        [JSON.stringify({ ...good, url: undefined }), 'url', /url is required/],
        [JSON.stringify({ ...good, scopes: 'assets:read' }), 'scopes', /scopes must be an array of strings/],
        [JSON.stringify({ ...good, standard_webhooks: 'yes' }), 'standard_webhooks', /true or false/],
        [JSON.stringify({ ...good, secret: 'whsec_mine' }), 'secret', /Unknown member "secret"; a registration takes url, scopes/],
        [JSON.stringify({ ...good, exchange: 'x' }), 'exchange', /broker destinations/],
        [JSON.stringify({ ...good, url: 'amqp://u:p@127.0.0.1:5672/%2F' }), 'exchange', /exchange/],
        [JSON.stringify({ ...good, events: ['asset.stolen'] }), 'events', /asset\.stolen/],
        [JSON.stringify({ ...good, filter: { data: { $where: '1' } } }), 'filter', /unknown operator \$where/],
      ] as const) {
        const res = await post(ws, body);
        const text = await res.text();
        assert.equal(res.status, 400, `${body}: ${text}`);
        const problem = JSON.parse(text);
        assert.equal(problem.param, param, text);
        assert.match(problem.detail, detail);
      }
      // A key naming the prototype is refused at the listener's edge, before any rule reads it.
      const proto = await post(
        ws,
        `{"url":"http://127.0.0.1:9/hook","scopes":["assets:read"],"events":["asset.assigned"],"__proto__":{"x":1}}`,
      );
      assert.equal(proto.status, 400);
      assert.equal(JSON.parse(await list(ws)).data.length, 0, 'nothing was registered');
    });

    it('a sixth endpoint delivering at once is a 409 limit_reached; an unknown workspace a 404', async () => {
      const ws = await h.workspace({ seed: false });
      const body = JSON.stringify({ url: 'http://127.0.0.1:9/hook', scopes: ['assets:read'], events: ['asset.assigned'] });
      for (let i = 0; i < 5; i++) assert.equal((await post(ws, body)).status, 201);
      const sixth = await post(ws, body);
      assert.equal(sixth.status, 409);
      assert.equal((await sixth.json()).code, 'limit_reached');
      assert.equal((await post('wsp_nosuchworkspace', body)).status, 404);
    });
  });
}
