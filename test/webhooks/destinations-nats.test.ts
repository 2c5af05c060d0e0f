/**
 * NATS JetStream destinations (CONTRACT "Event destinations and filters", ADR 52) against real
 * nats-server processes: the shared one on 127.0.0.1:4222 (.ci/run starts it) and, for the
 * restart, one of the test's own. A domain action's event is stored once in the stream over
 * its subject, signed, with `Nats-Msg-Id` the event id; a resend is stored again with the same
 * event id; no stream on the subject is a failed attempt; the server stopped and started again
 * loses nothing. The injected clock moves the retry schedule.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { StoredMsg } from '@nats-io/jetstream';
import { verifyWebhook } from '@wsops/client';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { resendDelivery } from '../../src/webhooks/queue/deliveries.js';
import { assetEvents } from '../helpers/asset-events.js';
import { NATS_URL, NatsStream, OwnNatsServer, selfSignedCertificate } from '../helpers/brokers.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const eventIdOf = (m: StoredMsg) => (JSON.parse(new TextDecoder().decode(m.data)) as { id: string }).id;

for (const dialect of DIALECTS) {
  describe(`NATS JetStream destinations [${dialect}]`, () => {
    let h: Harness;
    let dispatcher: Dispatcher;
    const streams: NatsStream[] = [];

    before(async () => {
      h = await createHarness(dialect, { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' });
      dispatcher = new Dispatcher(h.services, { random: () => 0 });
    });
    after(async () => {
      await dispatcher.stop();
      for (const s of streams) await s.stop();
      await h.close();
    });

    const drain = async () => {
      for (let n = await dispatcher.runOnce(); n > 0; n = await dispatcher.runOnce());
    };
    const row = (id: string) =>
      h.services.database.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const attempts = (id: string) =>
      h.services.database.db.selectFrom('delivery_attempts').selectAll().where('endpoint_id', '=', id).orderBy('attempted_at').execute();

    const setUp = async (server = NATS_URL) => {
      const ws = await h.workspace();
      const { raise } = await assetEvents(h, ws);
      const stream = await new NatsStream(`WSOPS_TEST_${dialect}_${randomBytes(4).toString('hex')}`, [`wsops.${ws}.>`], server).start();
      streams.push(stream);
      const ep = await createEndpoint(h.services, ws, { url: server, scopes: 'assets:read', events: 'asset.assigned,asset.returned' });
      return { ws, stream, raise, ep };
    };

    it('a domain action’s event is stored once in the stream, signed, with Nats-Msg-Id the event id; verified by the PubAck', async () => {
      const { ws, stream, raise, ep } = await setUp();
      assert.equal(ep.kind, 'nats');
      assert.equal(ep.subject, 'wsops.{workspace}.{type}');
      await drain();
      assert.equal((await row(ep.id)).status, 'active');
      const eventId = await raise();
      await drain();
      const messages = await stream.messages();
      assert.equal(messages.length, 2, 'the verification and the event');
      const m = messages[1];
      assert.ok(m);
      assert.equal(m.subject, `wsops.${ws}.asset.assigned`);
      const body = new TextDecoder().decode(m.data);
      const event = verifyWebhook<{ id: string }>(body, m.header.get('x-service-signature'), ep.secret, { now: h.clock() });
      assert.equal(event.id, eventId);
      assert.equal(m.header.get('Nats-Msg-Id'), eventId);
      assert.equal(m.header.get('x-service-event-id'), eventId);
      assert.equal(m.header.get('x-service-event'), 'asset.assigned');
      assert.equal(m.header.get('content-type'), 'application/json');
      h.clock.advance(3600_000);
      await drain();
      assert.equal((await stream.messages()).length, 2, 'once');
    });

    it('a resend is stored again with the same event id (not dropped as a duplicate)', async () => {
      const { ws, stream, raise, ep } = await setUp();
      await drain();
      const eventId = await raise();
      await drain();
      const [first] = (await attempts(ep.id)).filter((a) => a.event_id === eventId);
      assert.ok(first);
      await resendDelivery(h.services, ws, ep.id, first.id);
      await drain();
      const copies = (await stream.messages()).filter((m) => eventIdOf(m) === eventId);
      assert.equal(copies.length, 2);
      assert.ok(copies.every((m) => m.header.get('x-service-event-id') === eventId));
    });

    it('no stream on the subject is a failed attempt (broker_refused) naming the subject', async () => {
      const ws = await h.workspace({ seed: false });
      const ep = await createEndpoint(h.services, ws, {
        url: NATS_URL,
        scopes: 'assets:read',
        events: 'asset.assigned',
        subject: 'nobody.{workspace}.{type}',
      });
      await drain();
      const [a] = await attempts(ep.id);
      assert.equal(a?.outcome, 'failed');
      assert.equal(a?.error_class, 'broker_refused');
      assert.match(
        (await row(ep.id)).last_failure ?? '',
        new RegExp(`no JetStream stream listens on subject "nobody\\.${ws}\\.endpoint\\.verification"`),
      );
    });

    it('the server stopped and started again loses nothing: attempts while it is down fail, the retry stores the event once', async () => {
      const server = await new OwnNatsServer().start();
      try {
        const { stream, raise, ep } = await setUp(server.url);
        await drain();
        assert.equal((await row(ep.id)).status, 'active');
        await stream.stop(false);
        await server.stop();
        const eventId = await raise();
        await drain();
        const [failed] = (await attempts(ep.id)).filter((a) => a.event_id === eventId);
        assert.equal(failed?.outcome, 'failed');
        assert.equal(failed?.error_class, 'connection', `the failure recorded: ${(await row(ep.id)).last_failure}`);
        await server.start();
        h.clock.advance(60_000);
        await drain();
        const again = await new NatsStream(stream.name, stream.subjects, server.url).attach();
        streams.push(again);
        const copies = (await again.messages()).filter((m) => eventIdOf(m) === eventId);
        assert.equal(copies.length, 1);
        assert.equal((await row(ep.id)).status, 'active');
      } finally {
        await server.remove();
      }
    });

    it('tls:// verifies the server certificate for the host name: a self-signed one fails the attempt as tls', async () => {
      const certificate = selfSignedCertificate();
      const server = await new OwnNatsServer({ cert: certificate.cert, key: certificate.key }).start();
      try {
        const ws = await h.workspace({ seed: false });
        const ep = await createEndpoint(h.services, ws, {
          url: `tls://localhost:${server.port}`,
          scopes: 'assets:read',
          events: 'asset.assigned',
        });
        assert.equal(ep.url, `tls://localhost:${server.port}`);
        await drain();
        const [a] = await attempts(ep.id);
        assert.equal(a?.outcome, 'failed');
        assert.equal(a?.error_class, 'tls', (await row(ep.id)).last_failure ?? '');
        assert.equal((await row(ep.id)).status, 'unverified');
      } finally {
        await server.remove();
        rmSync(certificate.dir, { recursive: true, force: true });
      }
    });
  });
}
