/**
 * Standard Webhooks beside the seed's signature: real deliveries to a receiver on 127.0.0.1,
 * verified with the official `standardwebhooks` package and the endpoint's secret exactly as it
 * was shown, through a rotation; the same deliveries still verify under the seed's scheme with
 * the client's verifier and stripe-node's.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it, mock } from 'node:test';
import { verifyWebhook } from '@wsops/client';
import type { FastifyInstance } from 'fastify';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import Stripe from 'stripe';
import { listAudit } from '../../src/audit/audit.js';
import { buildInternalApp } from '../../src/http/internal-app.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint, disableEndpoint, rotateSecret, setStandardWebhooks } from '../../src/webhooks/endpoints/endpoints.js';
import { emitEvent } from '../../src/webhooks/events/outbox.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { type Received, Receiver } from '../helpers/receiver.js';

const stripe = new Stripe('sk_test_not_used_for_network');
const TOKEN = 'op-token-0123456789abcdef-0123456789abcdef';

for (const dialect of DIALECTS) {
  describe(`Standard Webhooks headers [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    let rx: Receiver;
    let dispatcher: Dispatcher;
    let internal: FastifyInstance;
    let path = 0;

    before(async () => {
      h = await createHarness(dialect, { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true', WSOPS_OPERATOR_TOKEN: TOKEN });
      internal = buildInternalApp(h.services);
      await internal.ready();
      ws = await h.workspace({ seed: false });
      rx = await new Receiver().start();
      dispatcher = new Dispatcher(h.services, { random: () => 0 });
    });
    after(async () => {
      mock.timers.reset();
      await dispatcher.stop();
      await internal.close();
      await rx.stop();
      await h.close();
    });
    beforeEach(async () => {
      const open = await h.services.database.db
        .selectFrom('webhook_endpoints')
        .select('id')
        .where('workspace_id', '=', ws)
        .where('status', '!=', 'disabled')
        .execute();
      for (const e of open) await disableEndpoint(h.services, ws, e.id);
    });

    const drain = async () => {
      for (let n = await dispatcher.runOnce(); n > 0; n = await dispatcher.runOnce());
    };
    const emit = () =>
      h.services.database.db
        .transaction()
        .execute((trx) =>
          emitEvent(
            trx,
            ws,
            'asset.assigned',
            { asset: { id: 'ast_x', asset_tag: 'AST-1', status: 'ASSIGNED' }, assigned_user_id: 'per_x', expected_return_at: null },
            h.clock(),
          ),
        );
    const newEndpoint = async (standardWebhooks: boolean) => {
      const p = `/std-${++path}`;
      const created = await createEndpoint(h.services, ws, {
        url: rx.url(p),
        scopes: 'assets:read',
        events: 'asset.assigned',
        standardWebhooks,
      });
      await drain();
      return { ...created, path: p };
    };
    /** The library reads the wall clock; the receiver's clock is set to the server's injected one. */
    const standardVerify = (secret: string, r: Received) => {
      mock.timers.enable({ apis: ['Date'], now: h.clock() });
      try {
        return new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
      } finally {
        mock.timers.reset();
      }
    };
    const seedVerify = (secret: string, r: Received) => {
      const header = String(r.headers['x-service-signature']);
      const viaClient = verifyWebhook(r.body, header, secret, { now: h.clock() });
      const viaStripe = stripe.webhooks.constructEvent(r.body, header, secret, 300, undefined, Math.floor(h.clock() / 1000));
      assert.deepEqual(viaStripe, viaClient);
      return viaClient;
    };

    it('an endpoint set to carry them gets webhook-id, webhook-timestamp and webhook-signature; both schemes verify', async () => {
      const ep = await newEndpoint(true);
      assert.equal(ep.standard_webhooks, true);
      const verification = rx.at(ep.path)[0];
      assert.ok(verification, 'the verification was delivered');
      assert.equal(
        (await h.services.database.db.selectFrom('webhook_endpoints').select('status').where('id', '=', ep.id).executeTakeFirstOrThrow())
          .status,
        'active',
      );
      const event = await emit();
      await drain();
      const got = rx.at(ep.path).at(-1) as Received;
      const body = JSON.parse(got.body);
      assert.equal(got.headers['webhook-id'], body.id, 'webhook-id is the event id');
      assert.equal(body.id, event.id);
      assert.equal(got.headers['webhook-timestamp'], String(Math.floor(h.clock() / 1000)));
      assert.match(String(got.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}=$/);
      assert.deepEqual(standardVerify(ep.secret, got), body);
      assert.deepEqual(seedVerify(ep.secret, got), body);
      // A tampered body, another endpoint's secret, or a stale timestamp is refused by the library.
      assert.throws(() => standardVerify(ep.secret, { ...got, body: got.body.replace('AST-1', 'AST-2') }), WebhookVerificationError);
      const other = await newEndpoint(true);
      assert.throws(() => standardVerify(other.secret, got), WebhookVerificationError);
      h.clock.advance(301_000);
      assert.throws(() => standardVerify(ep.secret, got), /too old/);
    });

    it('through a rotation: both secrets verify during the grace period, then only the new one, under both schemes', async () => {
      const ep = await newEndpoint(true);
      const rotated = await rotateSecret(h.services, ws, ep.id, 24);
      await emit();
      await drain();
      const during = rx.at(ep.path).at(-1) as Received;
      assert.match(String(during.headers['webhook-signature']), /^v1,\S+ v1,\S+$/, 'one signature per secret, space-separated');
      for (const secret of [rotated.secret, ep.secret]) {
        assert.equal((standardVerify(secret, during) as { id: string }).id, JSON.parse(during.body).id);
        seedVerify(secret, during);
      }
      h.clock.advance(24 * 3600_000 + 1);
      await emit();
      await drain();
      const later = rx.at(ep.path).at(-1) as Received;
      assert.match(String(later.headers['webhook-signature']), /^v1,\S+$/);
      standardVerify(rotated.secret, later);
      seedVerify(rotated.secret, later);
      assert.throws(() => standardVerify(ep.secret, later), WebhookVerificationError);
      assert.throws(() => seedVerify(ep.secret, later));
    });

    it('off by default: the seed signature alone, unchanged; switching on and off applies to the next delivery and is audited', async () => {
      const ep = await newEndpoint(false);
      assert.equal(ep.standard_webhooks, false);
      await emit();
      await drain();
      const plain = rx.at(ep.path).at(-1) as Received;
      assert.equal(plain.headers['webhook-signature'], undefined);
      assert.equal(plain.headers['webhook-id'], undefined);
      assert.match(String(plain.headers['x-service-signature']), /^t=\d+,v1=[0-9a-f]{64}$/);
      seedVerify(ep.secret, plain);

      assert.equal((await setStandardWebhooks(h.services, ws, ep.id, true, 'tester')).standard_webhooks, true);
      await emit();
      await drain();
      const on = rx.at(ep.path).at(-1) as Received;
      standardVerify(ep.secret, on);
      seedVerify(ep.secret, on);

      await setStandardWebhooks(h.services, ws, ep.id, false, 'tester');
      await emit();
      await drain();
      assert.equal((rx.at(ep.path).at(-1) as Received).headers['webhook-signature'], undefined);
      const audit = (await listAudit(h.services.database.db, ws, { limit: 50 })).filter(
        (a) => a.action === 'endpoint.signatures_set' && a.target === ep.id,
      );
      assert.deepEqual(
        audit.map((a) => a.detail),
        [{ standard_webhooks: false }, { standard_webhooks: true }],
      );
    });

    it('the internal API sets them with the operator token; a body other than {"standard_webhooks": boolean} is a 400', async () => {
      const ep = await newEndpoint(false);
      const put = (payload: unknown, token = TOKEN, workspace = ws) =>
        internal.inject({
          method: 'PUT',
          url: `/internal/v1/workspaces/${workspace}/webhook-endpoints/${ep.id}/signatures`,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          payload: JSON.stringify(payload),
        });
      assert.equal((await put({ standard_webhooks: true }, 'wrong-token')).statusCode, 401);
      for (const [bad, rule] of [
        [{ standard_webhooks: 'yes' }, /standard_webhooks must be true or false/],
        [{ standard_webhooks: true, url: 'https://evil.example' }, /Unknown member "url"/],
        [[true], /must be a JSON object/],
      ] as const) {
        const res = await put(bad);
        assert.equal(res.statusCode, 400, res.body);
        assert.match(JSON.parse(res.body).detail, rule);
      }
      const other = await h.workspace({ seed: false });
      assert.equal((await put({ standard_webhooks: true }, TOKEN, other)).statusCode, 404, "another workspace's endpoint is not found");
      const res = await put({ standard_webhooks: true });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(JSON.parse(res.body).standard_webhooks, true);
      assert.ok(!res.body.includes('whsec_'), 'never the secret');
      await emit();
      await drain();
      const got = rx.at(ep.path).at(-1) as Received;
      standardVerify(ep.secret, got);
      const [entry] = await listAudit(h.services.database.db, ws, { limit: 1 });
      assert.equal(entry?.action, 'endpoint.signatures_set');
      assert.equal(entry?.actor, 'operator');
    });
  });
}
