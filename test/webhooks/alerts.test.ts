/**
 * Failure alerts by email, end to end: a real receiver driven into failure, the real dispatcher,
 * the worker's alert round, and a real SMTP server on 127.0.0.1 (up, down, refusing). The clock
 * is injected: the one-hour stage passes without a test sleeping.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Transporter } from 'nodemailer';
import { createAlertTransport } from '../../src/alerts/mail.js';
import { alertRounds } from '../../src/alerts/rounds.js';
import { ALERT_RETRY_DELAYS_MS, runAlertRound } from '../../src/alerts/send.js';
import { listAudit } from '../../src/audit/audit.js';
import { describeAudit } from '../../src/audit-words.js';
import { createAdminLink } from '../../src/sign-in/sign-in-links.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint, enableEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { emitEvent } from '../../src/webhooks/events/outbox.js';
import { signedInAdmin } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { answer, Receiver } from '../helpers/receiver.js';
import { mailSubject, mailText, SmtpSink } from '../helpers/smtp.js';

const SMTP_PASSWORD = 'smtp-pass-never-shown';
// The clock stands still while an attempt runs, so a failure ends a few real milliseconds after
// the clock's time: the stage is checked a second past the hour.

for (const dialect of DIALECTS) {
  describe(`failure alerts by email [${dialect}]`, () => {
    let h: Harness;
    let rx: Receiver;
    let smtp: SmtpSink;
    let dispatcher: Dispatcher;
    let path = 0;
    const transports: Transporter[] = [];
    const transportTo = async (url: string) => {
      const t = await createAlertTransport(url);
      transports.push(t);
      return t;
    };
    let mailer: Transporter;
    /** WSOPS_ALERT_FAILING_AFTER_MINUTES (default: an hour), in ms. */
    const failingAfterMs = () => h.services.config.alertFailingAfterMinutes * 60_000;

    before(async () => {
      smtp = await new SmtpSink().start();
      const smtpUrl = `smtp://alerts:${SMTP_PASSWORD}@127.0.0.1:${smtp.port}`;
      h = await createHarness(dialect, {
        WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true',
        WSOPS_SMTP_URL: smtpUrl,
        WSOPS_ALERT_FROM: 'wsops <alerts@example.com>',
      });
      rx = await new Receiver().start();
      dispatcher = new Dispatcher(h.services, { random: () => 0 });
      mailer = await transportTo(smtpUrl);
    });
    after(async () => {
      for (const t of transports) t.close();
      await dispatcher.stop();
      await rx.stop();
      await smtp.stop();
      await h.close();
    });

    const drain = async () => {
      for (let n = await dispatcher.runOnce(); n > 0; n = await dispatcher.runOnce());
    };
    const emit = (ws: string) =>
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
    /** A workspace with two console admins, and an active endpoint that now answers 500. */
    const failingEndpoint = async () => {
      const ws = await h.workspace({ seed: false });
      for (const email of ['ann@example.com', 'bob@example.com'])
        await createAdminLink(h.services.database, { workspaceId: ws, email, actor: 'cli', now: h.clock() });
      const p = `/alerts-${++path}`;
      const ep = await createEndpoint(h.services, ws, { url: rx.url(p), scopes: 'assets:read', events: 'asset.assigned' });
      await drain();
      rx.on(p, answer(500));
      return { ws, id: ep.id, url: rx.url(p), path: p };
    };
    const alertsOf = (endpointId: string) =>
      h.services.database.db
        .selectFrom('endpoint_alerts')
        .selectAll()
        .where('endpoint_id', '=', endpointId)
        .orderBy('created_at')
        .execute();
    const mailsAbout = (endpointId: string) => smtp.mails.filter((m) => mailText(m.raw).includes(`Endpoint: ${endpointId}`));
    const metric = async (outcome: string) => {
      const text = await h.services.metrics.registry.metrics();
      const m = new RegExp(`^wsops_alert_mails_total\\{outcome="${outcome}"\\} (\\d+)`, 'm').exec(text);
      return Number(m?.[1] ?? 0);
    };

    it("the worker's rounds mail through WSOPS_SMTP_URL: the transport is made at the first round, and closed with the worker", async () => {
      const ep = await failingEndpoint();
      await emit(ep.ws);
      await drain();
      h.clock.advance(failingAfterMs() + 1000);
      await drain();
      const rounds = alertRounds(h.services, h.services.logger);
      await rounds.run();
      assert.equal(mailsAbout(ep.id).length, 1, 'the failing stage is mailed by the first round');
      assert.deepEqual(smtp.logins.at(-1), { username: 'alerts', password: SMTP_PASSWORD }, 'through the SMTP URL of the settings');
      await rounds.close();
    });

    it('failing for an hour, disabled, recovered: one mail each to every admin, naming the endpoint, the error class and its deliveries page; a new episode alerts again', async () => {
      const ep = await failingEndpoint();
      await emit(ep.ws);
      await drain();
      await runAlertRound(h.services, mailer);
      h.clock.advance(failingAfterMs() - 60_000);
      await drain();
      await runAlertRound(h.services, mailer);
      assert.equal(mailsAbout(ep.id).length, 0, 'no alert before the endpoint has failed for the set time');

      h.clock.advance(61_000);
      await runAlertRound(h.services, mailer);
      await runAlertRound(h.services, mailer);
      const [failing] = mailsAbout(ep.id);
      assert.equal(mailsAbout(ep.id).length, 1, 'the failing stage is mailed once, however many rounds run');
      assert.ok(failing);
      assert.deepEqual(failing.to.sort(), ['ann@example.com', 'bob@example.com']);
      assert.equal(failing.from, 'alerts@example.com');
      assert.match(mailSubject(failing.raw), new RegExp(`${ep.id} has been failing for over 1 hour`));
      const text = mailText(failing.raw);
      assert.ok(text.includes(`URL: ${ep.url}`), text);
      assert.match(text, /Last error class: http_status \(the receiver answered with a status outside 2xx\)/);
      assert.ok(text.includes(`${h.services.config.baseUrl}/console/webhooks/${ep.id}/deliveries`), text);
      assert.deepEqual(smtp.logins.at(-1), { username: 'alerts', password: SMTP_PASSWORD }, 'the SMTP URL logs in');

      for (let i = 0; i < 20; i++) await emit(ep.ws);
      await drain();
      const row = await h.services.database.db
        .selectFrom('webhook_endpoints')
        .selectAll()
        .where('id', '=', ep.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.status, 'disabled');
      await runAlertRound(h.services, mailer);
      await runAlertRound(h.services, mailer);
      assert.equal(mailsAbout(ep.id).length, 2);
      assert.match(mailSubject(mailsAbout(ep.id)[1]?.raw ?? ''), /was disabled after 20 failed deliveries in a row/);

      rx.on(ep.path, answer(200));
      await enableEndpoint(h.services, ep.ws, ep.id);
      await runAlertRound(h.services, mailer);
      assert.equal(mailsAbout(ep.id).length, 2, 'switched on but not yet verified is not recovered');
      await drain();
      await runAlertRound(h.services, mailer);
      await runAlertRound(h.services, mailer);
      assert.equal(mailsAbout(ep.id).length, 3);
      assert.match(mailSubject(mailsAbout(ep.id)[2]?.raw ?? ''), /has recovered/);

      const audit = (await listAudit(h.services.database.db, ep.ws)).filter((a) => a.action === 'endpoint.alert_sent');
      assert.deepEqual(audit.map((a) => a.detail.stage).sort(), ['disabled', 'failing', 'recovered']);
      assert.ok(audit.every((a) => a.actor === 'system' && a.target === ep.id && a.detail.recipients === 2));
      const failingEntry = audit.find((a) => a.detail.stage === 'failing');
      assert.match(
        describeAudit(failingEntry as NonNullable<typeof failingEntry>),
        /has been failing for over 1 hour$/,
        'the threshold in force',
      );

      // A new run of failures after the recovery is a new episode: it is alerted again.
      rx.on(ep.path, answer(503));
      await emit(ep.ws);
      await drain();
      h.clock.advance(failingAfterMs() + 1_000);
      await runAlertRound(h.services, mailer);
      assert.equal(mailsAbout(ep.id).length, 4);
      assert.match(mailSubject(mailsAbout(ep.id)[3]?.raw ?? ''), /has been failing/);

      const admin = await signedInAdmin(h, ep.ws, { email: 'ann@example.com' });
      const page = await admin.get(`/console/webhooks/${ep.id}`);
      assert.equal(page.status, 200);
      assert.match(page.body, /<h2 id="alerts-h">Failure alerts<\/h2>/);
      assert.equal(page.body.match(/data-alert="failing"/g)?.length, 2);
      assert.equal(page.body.match(/data-alert="disabled"/g)?.length, 1);
      assert.equal(page.body.match(/data-alert="recovered"/g)?.length, 1);
      assert.equal(page.body.match(/Mailed<\/span> to ann@example.com, bob@example.com/g)?.length, 4);
      rx.on(ep.path, answer(200));
    });

    it('an SMTP server that is down or hangs never holds webhook delivery; the alert is retried with backoff and the failure counted', async () => {
      const ep = await failingEndpoint();
      const healthyPath = `/alerts-healthy-${++path}`;
      await createEndpoint(h.services, ep.ws, { url: rx.url(healthyPath), scopes: 'assets:read', events: 'asset.assigned' });
      await emit(ep.ws);
      await drain();
      h.clock.advance(failingAfterMs() + 1_000);

      // Down: nothing listens on the port.
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const closedPort = (closed.address() as AddressInfo).port;
      await new Promise((resolve) => closed.close(resolve));
      const failedBefore = await metric('failed');
      const down = await runAlertRound(h.services, await transportTo(`smtp://alerts:${SMTP_PASSWORD}@127.0.0.1:${closedPort}`));
      assert.ok(down.failed >= 1);
      const alerts = await alertsOf(ep.id);
      assert.equal(alerts.length, 1);
      const [pending] = alerts;
      assert.equal(pending?.state, 'pending');
      assert.equal(pending?.attempts, 1);
      assert.match(pending?.last_error ?? '', /ECONNREFUSED/);
      assert.ok(!pending?.last_error?.includes(SMTP_PASSWORD), 'the password is never kept with the error');
      assert.equal(pending?.next_attempt_at, new Date(h.clock() + (ALERT_RETRY_DELAYS_MS[0] as number)).toISOString());
      assert.equal(await metric('failed'), failedBefore + down.failed, 'each failed try is counted');

      // Hanging: it accepts the connection and never greets. Deliveries go on meanwhile.
      const sockets: Socket[] = [];
      let hang = true;
      const hanging: Server = createServer((s) => (hang ? sockets.push(s) : s.destroy()));
      await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
      h.clock.advance(ALERT_RETRY_DELAYS_MS[0] as number);
      const round = runAlertRound(h.services, await transportTo(`smtp://127.0.0.1:${(hanging.address() as AddressInfo).port}`));
      while (sockets.length === 0) await new Promise((resolve) => setImmediate(resolve));
      const before = rx.at(healthyPath).length;
      await emit(ep.ws);
      await drain();
      assert.equal(rx.at(healthyPath).length, before + 1, 'the healthy endpoint got its delivery while the mail server hangs');
      hang = false;
      for (const s of sockets) s.destroy();
      const hung = await round;
      hanging.close();
      assert.ok(hung.failed >= 1);
      assert.equal((await alertsOf(ep.id))[0]?.attempts, 2);
      assert.equal(mailsAbout(ep.id).length, 0);

      // Not yet due: the second retry waits its backoff.
      await runAlertRound(h.services, mailer);
      assert.equal(mailsAbout(ep.id).length, 0, 'a retry waits for its backoff');
      h.clock.advance(ALERT_RETRY_DELAYS_MS[1] as number);
      const sentBefore = await metric('sent');
      const back = await runAlertRound(h.services, mailer);
      assert.equal(mailsAbout(ep.id).length, 1, 'the retry reaches the admins once the mail server is back');
      assert.equal((await alertsOf(ep.id))[0]?.state, 'sent');
      assert.equal(await metric('sent'), sentBefore + back.sent);
      assert.ok(back.sent >= 1);
      rx.on(ep.path, answer(200));
    });

    it('an SMTP server that refuses (5xx recipient, 4xx data) is retried; after the last retry the alert is given up and shown so in the console', async () => {
      const ep = await failingEndpoint();
      await emit(ep.ws);
      await drain();
      h.clock.advance(failingAfterMs() + 1_000);
      smtp.refuse = { at: 'rcpt', code: 550, message: 'mailbox unavailable' };
      await runAlertRound(h.services, mailer);
      let [alert] = await alertsOf(ep.id);
      assert.match(alert?.last_error ?? '', /550/);
      smtp.refuse = { at: 'data', code: 451, message: 'try again later' };
      for (const delay of ALERT_RETRY_DELAYS_MS) {
        h.clock.advance(delay);
        await runAlertRound(h.services, mailer);
      }
      [alert] = await alertsOf(ep.id);
      assert.equal(alert?.state, 'failed');
      assert.equal(alert?.attempts, ALERT_RETRY_DELAYS_MS.length + 1);
      assert.match(alert?.last_error ?? '', /451/);
      assert.ok((await metric('given_up')) >= 1);
      smtp.refuse = undefined;
      h.clock.advance(24 * 3600_000);
      await runAlertRound(h.services, mailer);
      assert.equal(mailsAbout(ep.id).length, 0, 'a given-up alert is not sent again');
      const admin = await signedInAdmin(h, ep.ws, { email: 'ann@example.com' });
      const page = await admin.get(`/console/webhooks/${ep.id}`);
      assert.match(page.body, /Not sent, given up/);
      assert.match(page.body, /451/);
      rx.on(ep.path, answer(200));
    });

    it('without a mail server, alerts are recorded for the console only', async () => {
      const ep = await failingEndpoint();
      await emit(ep.ws);
      await drain();
      h.clock.advance(failingAfterMs() + 1_000);
      await runAlertRound(h.services, undefined);
      const [alert] = await alertsOf(ep.id);
      assert.equal(alert?.state, 'console');
      assert.equal(alert?.stage, 'failing');
      const admin = await signedInAdmin(h, ep.ws, { email: 'ann@example.com' });
      const page = await admin.get(`/console/webhooks/${ep.id}`);
      assert.match(page.body, /Console only/);
      rx.on(ep.path, answer(200));
    });
  });
}
