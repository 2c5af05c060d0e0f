/**
 * Broker destinations in the console's registration form (ADR 52): the same form takes an
 * amqps:// or tls:// URL with the exchange, routing key or subject; a refusal is shown next to
 * its field; the password is never on a page after the form is sent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type SignedInAdmin, signedInAdmin } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

for (const dialect of DIALECTS) {
  describe(`console destination registration [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    let admin: SignedInAdmin;

    before(async () => {
      h = await createHarness(dialect, { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' });
      ws = await h.workspace({ seed: false });
      admin = await signedInAdmin(h, ws);
    });
    after(() => h.close());

    it('the form has the destination fields; a missing exchange is refused next to its field, the password not echoed back', async () => {
      const form = await admin.get('/console/webhooks/new');
      for (const name of ['exchange', 'routing_key', 'subject']) assert.match(form.body, new RegExp(`name="${name}"`));
      assert.match(form.body, /amqps:\/\/USER:PASSWORD@HOST:PORT\/VHOST/);
      const res = await admin.post('/console/webhooks/new', {
        url: 'amqp://guest:pw-console-1@127.0.0.1:5672/%2F',
        scopes: ['assets:read'],
        events: ['asset.assigned'],
        exchange: '',
      });
      assert.equal(res.status, 400);
      assert.match(res.body, /id="f-exchange-error">a RabbitMQ destination needs --exchange NAME/);
      assert.ok(!res.body.includes('pw-console-1'), 'the password is not sent back in the form');
      assert.ok(res.body.includes('value="amqp://guest@127.0.0.1:5672/%2F"'), 'the rest of the URL is kept');
      const bad = await admin.post('/console/webhooks/new', {
        url: 'nats://127.0.0.1:4222',
        scopes: ['assets:read'],
        events: ['asset.assigned'],
        subject: 'x.{nope}',
      });
      assert.equal(bad.status, 400);
      assert.match(bad.body, /id="f-subject-error">--subject has an unknown placeholder \{nope\}/);
    });

    it('registers a RabbitMQ destination; the endpoint page shows the exchange and routing key and no password', async () => {
      const res = await admin.post('/console/webhooks/new', {
        url: 'amqp://guest:pw-console-2@127.0.0.1:5672/%2F',
        scopes: ['assets:read'],
        events: ['asset.assigned'],
        exchange: 'events',
        routing_key: 'wsops.{type}',
      });
      assert.equal(res.status, 200, res.body.slice(0, 500));
      assert.ok(!res.body.includes('pw-console-2'));
      const id = /href="\/console\/webhooks\/(we_[0-9A-Za-z]+)"/.exec(res.body)?.[1] as string;
      const page = await admin.get(`/console/webhooks/${id}`);
      assert.equal(page.status, 200);
      assert.ok(page.body.includes('amqp://guest@127.0.0.1:5672/%2F'));
      assert.match(page.body, /RabbitMQ: exchange <code>events<\/code>, routing key <code>wsops\.\{type\}<\/code>/);
      assert.ok(!page.body.includes('pw-console-2'));
      const list = await admin.get('/console/webhooks');
      assert.ok(!list.body.includes('pw-console-2'));
    });
  });
}
