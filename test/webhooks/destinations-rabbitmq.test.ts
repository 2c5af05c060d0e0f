/**
 * RabbitMQ destinations (CONTRACT "Event destinations and filters", ADR 52) against the real
 * broker on 127.0.0.1:5672 (.ci/run starts it): a domain action's event arrives once in a queue
 * bound to the exchange, signed like a webhook; the broker stopped and started again loses
 * nothing; refused credentials fail as `auth`, and 20 failures disable the endpoint and alert;
 * a resend arrives again with the same event id; no exchange, or no queue for the routing key,
 * is a failed attempt. The injected clock moves the retry schedule; only the broker's own
 * delivery and restart take real time.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { verifyWebhook } from '@wsops/client';
import type { ConsumeMessage } from 'amqplib';
import { runAlertRound } from '../../src/alerts/send.js';
import { listEndpointAlerts } from '../../src/alerts/stages.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint, enableEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { resendDelivery } from '../../src/webhooks/queue/deliveries.js';
import { assetEvents } from '../helpers/asset-events.js';
import { bareExchange, RabbitConsumer, rabbitmqctl, restartRabbitMq } from '../helpers/brokers.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const header = (m: ConsumeMessage, name: string) => {
  const v = m.properties.headers?.[name];
  return typeof v === 'string' ? v : Buffer.isBuffer(v) ? v.toString() : undefined;
};

for (const dialect of DIALECTS) {
  describe(`RabbitMQ destinations [${dialect}]`, () => {
    let h: Harness;
    let dispatcher: Dispatcher;
    const consumers: RabbitConsumer[] = [];
    const users: string[] = [];
    const cleanups: (() => Promise<void>)[] = [];

    before(async () => {
      h = await createHarness(dialect, { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' });
      dispatcher = new Dispatcher(h.services, { random: () => 0 });
    });
    after(async () => {
      await dispatcher.stop();
      for (const c of consumers) await c.stop();
      for (const u of users) await rabbitmqctl('delete_user', u).catch(() => {});
      for (const c of cleanups) await c();
      await h.close();
    });

    const drain = async (d = dispatcher) => {
      for (let n = await d.runOnce(); n > 0; n = await d.runOnce());
    };
    const row = (id: string) =>
      h.services.database.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const attempts = (id: string) =>
      h.services.database.db.selectFrom('delivery_attempts').selectAll().where('endpoint_id', '=', id).orderBy('attempted_at').execute();

    /** A seeded workspace, a consumer on a new exchange, and a way to raise asset events through the domain actions. */
    const setUp = async () => {
      const ws = await h.workspace();
      const { raise } = await assetEvents(h, ws);
      const consumer = await new RabbitConsumer(`wsops-test-${dialect}-${randomBytes(4).toString('hex')}`).start();
      consumers.push(consumer);
      return { ws, consumer, raise };
    };

    const register = (ws: string, url: string, exchange: string, more: { routingKey?: string } = {}) =>
      createEndpoint(h.services, ws, { url, scopes: 'assets:read', events: 'asset.assigned,asset.returned', exchange, ...more });

    it('a domain action’s event arrives once in a queue bound to the exchange, signed, with the event id; the password is sealed and shown nowhere', async () => {
      const { ws, consumer, raise } = await setUp();
      const ep = await register(ws, 'amqp://guest:guest@127.0.0.1:5672/%2F', consumer.exchange);
      assert.equal(ep.url, 'amqp://guest@127.0.0.1:5672/%2F');
      assert.equal(ep.kind, 'rabbitmq');
      assert.equal(ep.routing_key, '{type}');
      const stored = await row(ep.id);
      assert.ok(!JSON.stringify(stored).includes('guest:guest'), 'no password in the row beside its ciphertext');
      assert.equal(h.services.secretBox.open(stored.destination_secret_ciphertext ?? ''), 'guest');

      // Verified when the broker confirms the verification message.
      await drain();
      assert.equal((await row(ep.id)).status, 'active');
      const [verification] = await consumer.received(1);
      assert.equal(verification?.fields.routingKey, 'endpoint.verification');

      const eventId = await raise();
      await drain();
      const messages = await consumer.received(2);
      const m = messages[1];
      assert.ok(m);
      const body = m.content.toString();
      const event = verifyWebhook<{ id: string; type: string }>(body, header(m, 'x-service-signature'), ep.secret, { now: h.clock() });
      assert.equal(event.id, eventId);
      assert.equal(event.type, 'asset.assigned');
      assert.equal(m.fields.routingKey, 'asset.assigned');
      assert.equal(m.properties.messageId, eventId);
      assert.equal(m.properties.contentType, 'application/json');
      assert.equal(m.properties.deliveryMode, 2, 'persistent');
      assert.equal(header(m, 'x-service-event'), 'asset.assigned');
      assert.equal(header(m, 'x-service-event-id'), eventId);
      assert.match(header(m, 'x-service-delivery') ?? '', /^dlv_/);
      const event2 = await (async () => {
        const [attempt] = (await attempts(ep.id)).filter((a) => a.event_id === eventId);
        return attempt;
      })();
      assert.equal(event2?.outcome, 'succeeded');
      // Once: nothing more arrives after another round.
      h.clock.advance(3600_000);
      await drain();
      assert.equal(consumer.messages.length, 2);
    });

    it('a resend arrives again with the same event id', async () => {
      const { ws, consumer, raise } = await setUp();
      const ep = await register(ws, 'amqp://guest:guest@127.0.0.1:5672/%2F', consumer.exchange, { routingKey: 'wsops.{workspace}.{type}' });
      await drain();
      const eventId = await raise();
      await drain();
      await consumer.received(2);
      const [first] = (await attempts(ep.id)).filter((a) => a.event_id === eventId);
      assert.ok(first);
      await resendDelivery(h.services, ws, ep.id, first.id);
      await drain();
      const messages = await consumer.received(3);
      const again = messages[2];
      assert.ok(again);
      assert.equal(again.properties.messageId, eventId);
      assert.equal(header(again, 'x-service-event-id'), eventId);
      assert.equal(again.fields.routingKey, `wsops.${ws}.asset.assigned`);
      assert.notEqual(header(again, 'x-service-delivery'), header(messages[1] as ConsumeMessage, 'x-service-delivery'));
    });

    it('a missing exchange, or no queue bound for the routing key, is a failed attempt (broker_refused)', async () => {
      const { ws, consumer } = await setUp();
      const missing = await register(ws, 'amqp://guest:guest@127.0.0.1:5672/%2F', `${consumer.exchange}-missing`);
      const unrouted = await register(ws, 'amqp://guest:guest@127.0.0.1:5672/%2F', consumer.exchange, { routingKey: 'x' });
      const removeBare = await bareExchange(`${consumer.exchange}-bare`);
      cleanups.push(removeBare);
      const noQueue = await register(ws, 'amqp://guest:guest@127.0.0.1:5672/%2F', `${consumer.exchange}-bare`);
      await drain();
      const [m] = await attempts(missing.id);
      assert.equal(m?.outcome, 'failed');
      assert.equal(m?.error_class, 'broker_refused');
      assert.match((await row(missing.id)).last_failure ?? '', /NOT_FOUND - no exchange/);
      assert.equal((await row(unrouted.id)).status, 'active', 'routed to the consumer queue (#)');
      const [q] = await attempts(noQueue.id);
      assert.equal(q?.outcome, 'failed');
      assert.equal(q?.error_class, 'broker_refused');
      assert.match((await row(noQueue.id)).last_failure ?? '', /unroutable: no queue is bound/);
    });

    it('refused credentials fail as auth; 20 failures in a row disable the endpoint and raise the alert; switched on again it gets what it owed and what was raised meanwhile, each once', async () => {
      const { ws, consumer, raise } = await setUp();
      const user = `wsops_test_${dialect}_${randomBytes(3).toString('hex')}`;
      users.push(user);
      await rabbitmqctl('add_user', user, 'right-password');
      await rabbitmqctl('set_permissions', '-p', '/', user, '.*', '.*', '.*');
      const ep = await register(ws, `amqp://${user}:right-password@127.0.0.1:5672/%2F`, consumer.exchange);
      await drain();
      assert.equal((await row(ep.id)).status, 'active');
      await rabbitmqctl('change_password', user, 'another-password');
      // A fresh worker: the connection the first opened stays authenticated (as a real restart would not).
      const fresh = new Dispatcher(h.services, { random: () => 0 });
      try {
        for (let i = 0; i < 20; i++) await raise();
        await drain(fresh);
      } finally {
        await fresh.stop();
      }
      const failedAttempts = (await attempts(ep.id)).filter((a) => a.outcome === 'failed');
      assert.equal(failedAttempts.length, 20);
      assert.ok(
        failedAttempts.every((a) => a.error_class === 'auth'),
        JSON.stringify(failedAttempts.map((a) => a.error_class)),
      );
      const disabled = await row(ep.id);
      assert.equal(disabled.status, 'disabled');
      assert.equal(disabled.disabled_reason, 'failures');
      assert.ok(!(disabled.last_failure ?? '').includes('another-password') && !(disabled.last_failure ?? '').includes('right-password'));
      await runAlertRound(h.services, undefined);
      const alerts = await listEndpointAlerts(h.services.database.db, ws, ep.id);
      assert.ok(
        alerts.some((a) => a.stage === 'disabled'),
        JSON.stringify(alerts),
      );

      // Nothing is lost: an event raised while it is disabled is held; the broker's password put
      // back, switched on and verified again, it gets the 20 it owed and that one, each once.
      const meanwhile = await raise();
      await rabbitmqctl('change_password', user, 'right-password');
      await enableEndpoint(h.services, ws, ep.id);
      const again = new Dispatcher(h.services, { random: () => 0 });
      try {
        await drain(again);
        // The owed deliveries keep their place in the retry schedule: their second attempt is a minute on.
        h.clock.advance(120_000);
        await drain(again);
      } finally {
        await again.stop();
      }
      assert.equal((await row(ep.id)).status, 'active');
      const ids = consumer.messages
        .filter((m) => m.fields.routingKey !== 'endpoint.verification')
        .map((m) => m.properties.messageId as string);
      await consumer.received(1 + 21 + 1, 'the verifications and the 21 events');
      const delivered = consumer.messages
        .filter((m) => m.fields.routingKey !== 'endpoint.verification')
        .map((m) => m.properties.messageId as string);
      assert.equal(delivered.length, 21, JSON.stringify(ids));
      assert.equal(new Set(delivered).size, 21, 'each once');
      assert.ok(delivered.includes(meanwhile));
    });

    it('the broker stopped and started again loses nothing: the attempts while it is down fail, the retry delivers', async () => {
      const { ws, consumer, raise } = await setUp();
      const ep = await register(ws, 'amqp://guest:guest@127.0.0.1:5672/%2F', consumer.exchange);
      await drain();
      await consumer.received(1);
      let eventId = '';
      await restartRabbitMq(async () => {
        eventId = await raise();
        await drain();
        const [failed] = (await attempts(ep.id)).filter((a) => a.event_id === eventId);
        assert.equal(failed?.outcome, 'failed');
        assert.ok(['connection', 'network'].includes(failed?.error_class ?? ''), failed?.error_class ?? '');
      });
      await consumer.reconnect();
      // The retry schedule's next attempt, a minute on.
      h.clock.advance(60_000);
      await drain();
      const messages = await consumer.received(2);
      assert.equal(messages.filter((m) => m.properties.messageId === eventId).length, 1, 'delivered once');
      assert.equal((await row(ep.id)).status, 'active');
    });
  });
}
