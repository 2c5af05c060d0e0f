/**
 * Nothing is lost while an endpoint is disabled for failures (CONTRACT "Webhooks"): events raised
 * meanwhile, through the domain actions' own statements, are held for it and sent once it is
 * switched on and verified again, each once, with what it already owed. A user's own disable
 * takes no events. A real receiver on 127.0.0.1, the real dispatcher, a real SMTP server for the
 * alert, an injected clock (no sleeps).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Transporter } from 'nodemailer';
import { createAlertTransport } from '../../src/alerts/mail.js';
import { runAlertRound } from '../../src/alerts/send.js';
import { createAdminLink } from '../../src/sign-in/sign-in-links.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint, disableEndpoint, enableEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { emitEvent } from '../../src/webhooks/events/outbox.js';
import { pruneDeliveryHistory } from '../../src/webhooks/queue/retention.js';
import { assetEvents } from '../helpers/asset-events.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { Receiver } from '../helpers/receiver.js';
import { mailSubject, mailText, SmtpSink } from '../helpers/smtp.js';

for (const dialect of DIALECTS) {
  describe(`events held while an endpoint is disabled [${dialect}]`, () => {
    let h: Harness;
    let rx: Receiver;
    let smtp: SmtpSink;
    let mailer: Transporter;
    let dispatcher: Dispatcher;
    let path = 0;

    before(async () => {
      smtp = await new SmtpSink().start();
      const smtpUrl = `smtp://alerts:pass@127.0.0.1:${smtp.port}`;
      h = await createHarness(dialect, {
        WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true',
        WSOPS_SMTP_URL: smtpUrl,
        WSOPS_ALERT_FROM: 'alerts@example.com',
      });
      rx = await new Receiver().start();
      dispatcher = new Dispatcher(h.services, { random: () => 0 });
      mailer = await createAlertTransport(smtpUrl);
    });
    after(async () => {
      mailer.close();
      await dispatcher.stop();
      await rx.stop();
      await smtp.stop();
      await h.close();
    });

    const drain = async () => {
      for (let n = await dispatcher.runOnce(); n > 0; n = await dispatcher.runOnce());
    };
    const status = (id: string) =>
      h.services.database.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const jobsOf = (endpointId: string) =>
      h.services.database.db.selectFrom('delivery_jobs').select(['event_id', 'state']).where('endpoint_id', '=', endpointId).execute();

    /**
     * A seeded workspace with an admin, an endpoint for the asset events (verified), and a way to
     * raise one event through a domain action: an asset assigned, then returned, in turn.
     */
    const setUp = async () => {
      const ws = await h.workspace();
      await createAdminLink(h.services.database, { workspaceId: ws, email: 'ops@example.com', actor: 'cli', now: h.clock() });
      const { raise } = await assetEvents(h, ws);
      const p = `/held-${++path}`;
      /** Event ids the receiver answered with a 2xx, in order. */
      const accepted: string[] = [];
      let healthy = true;
      rx.on(p, (_req, res, body) => {
        if (!healthy) return void res.writeHead(500).end('down');
        accepted.push((JSON.parse(body) as { id: string }).id);
        res.writeHead(200).end('ok');
      });
      const ep = await createEndpoint(h.services, ws, { url: rx.url(p), scopes: 'assets:read', events: 'asset.assigned asset.returned' });
      await drain();
      assert.equal((await status(ep.id)).status, 'active');
      accepted.length = 0;
      return {
        ws,
        id: ep.id,
        raise,
        accepted,
        setHealthy: (up: boolean) => {
          healthy = up;
        },
      };
    };

    it('20 failures disable it; events raised afterwards through domain actions are held and delivered once it is switched on, each exactly once, with those it owed; the mail says so', async () => {
      const ep = await setUp();
      ep.setHealthy(false);
      const raised: string[] = [];
      for (let i = 0; i < 20; i++) raised.push(await ep.raise());
      await drain();
      const disabled = await status(ep.id);
      assert.equal(disabled.status, 'disabled');
      assert.equal(disabled.disabled_reason, 'failures');

      // Raised while it is disabled: through the domain actions' statements and the outbox's.
      for (let i = 0; i < 5; i++) raised.push(await ep.raise());
      const direct = await h.services.database.db
        .transaction()
        .execute((trx) =>
          emitEvent(
            trx,
            ep.ws,
            'asset.assigned',
            { asset: { id: 'ast_x', asset_tag: 'AST-1', status: 'ASSIGNED' }, assigned_user_id: 'per_x', expected_return_at: null },
            h.clock(),
          ),
        );
      assert.equal(direct.jobs, 1);
      raised.push(direct.id);
      const jobs = await jobsOf(ep.id);
      const held = jobs.filter((j) => j.state === 'held').map((j) => j.event_id);
      assert.deepEqual(held.sort(), [...raised].sort(), 'the owed deliveries and the events raised since are held, one each');
      h.clock.advance(3600_000);
      await drain();
      assert.equal(ep.accepted.length, 0, 'nothing is sent while it is disabled');

      await runAlertRound(h.services, mailer);
      const mail = smtp.mails.find((m) => mailText(m.raw).includes(`Endpoint: ${ep.id}`));
      assert.ok(mail);
      assert.match(mailSubject(mail.raw), /was disabled after 20 failed deliveries in a row/);
      const text = mailText(mail.raw).replace(/\s+/g, ' ');
      assert.ok(
        text.includes(
          'Deliveries to it are held, not lost: those it already owed, and every event it subscribes to raised while it stays disabled (each kept 30 days).',
        ),
        text,
      );
      assert.ok(text.includes('the held deliveries are sent, each once.'), text);

      ep.setHealthy(true);
      await enableEndpoint(h.services, ep.ws, ep.id);
      // Raised after the switch-on, before the verification is answered: held too.
      raised.push(await ep.raise());
      await drain();
      assert.equal((await status(ep.id)).status, 'active');
      const delivered = ep.accepted.filter((id) => raised.includes(id));
      assert.deepEqual([...delivered].sort(), [...raised].sort(), 'every event delivered, each exactly once');
      assert.equal(new Set(ep.accepted).size, ep.accepted.length, 'no event twice (the verification aside, nothing else)');
      h.clock.advance(24 * 3600_000);
      await drain();
      assert.equal(ep.accepted.filter((id) => raised.includes(id)).length, raised.length, 'no late duplicate');
    });

    it("a user's own disable takes no events raised while it is off; what it owed is held and sent after switch-on", async () => {
      const ep = await setUp();
      ep.setHealthy(false);
      const owed = await ep.raise();
      await drain();
      await disableEndpoint(h.services, ep.ws, ep.id);
      const meanwhile = await ep.raise();
      assert.deepEqual(
        (await jobsOf(ep.id)).filter((j) => j.event_id === owed || j.event_id === meanwhile),
        [{ event_id: owed, state: 'held' }],
        'the owed delivery is held; the event raised while the user has it off is not queued for it',
      );
      ep.setHealthy(true);
      await enableEndpoint(h.services, ep.ws, ep.id);
      // The owed delivery keeps its place in the retry schedule (its second attempt, a minute on).
      h.clock.advance(120_000);
      await drain();
      assert.ok(ep.accepted.includes(owed));
      assert.ok(!ep.accepted.includes(meanwhile));
    });

    it('held deliveries are kept within the delivery retention, then pruned with their events', async () => {
      const ep = await setUp();
      ep.setHealthy(false);
      for (let i = 0; i < 20; i++) await ep.raise();
      await drain();
      assert.equal((await status(ep.id)).disabled_reason, 'failures');
      const late = await ep.raise();
      h.clock.advance((h.services.config.deliveryRetentionDays - 1) * 86_400_000);
      await pruneDeliveryHistory(h.services);
      assert.equal((await jobsOf(ep.id)).filter((j) => j.state === 'held').length, 21, 'kept within the retention');
      h.clock.advance(2 * 86_400_000);
      await pruneDeliveryHistory(h.services);
      assert.equal((await jobsOf(ep.id)).filter((j) => j.state === 'held').length, 0, 'pruned after it');
      const event = await h.services.database.db.selectFrom('events').select('id').where('id', '=', late).executeTakeFirst();
      assert.equal(event, undefined);
    });
  });
}
