/**
 * Alerts a team can rely on (issue 58, part 3): the failing threshold is a setting, an address
 * added for the workspace (a team mailbox) gets the real alerts beside the console admins, and
 * "send a test alert" goes through the real SMTP path and reports the server's answer, from the
 * console and from the CLI. A real SMTP server and receiver on 127.0.0.1, an injected clock.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import type { Transporter } from 'nodemailer';
import { createAlertTransport } from '../../src/alerts/mail.js';
import { addAlertRecipient, alertAddresses, removeAlertRecipient } from '../../src/alerts/recipients.js';
import { runAlertRound } from '../../src/alerts/send.js';
import { sendTestAlert } from '../../src/alerts/test-alert.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { emitEvent } from '../../src/webhooks/events/outbox.js';
import { signedInAdmin } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness, TEST_SECRET } from '../helpers/harness.js';
import { answer, Receiver } from '../helpers/receiver.js';
import { mailSubject, mailText, SmtpSink } from '../helpers/smtp.js';

const BIN = new URL('../../bin/wsops', import.meta.url).pathname;

for (const dialect of DIALECTS) {
  describe(`alert recipients, threshold and test alerts [${dialect}]`, () => {
    let h: Harness;
    let smtp: SmtpSink;
    let smtpUrl: string;
    let mailer: Transporter;
    let rx: Receiver;
    let dispatcher: Dispatcher;

    before(async () => {
      smtp = await new SmtpSink().start();
      smtpUrl = `smtp://alerts:pass@127.0.0.1:${smtp.port}`;
      h = await createHarness(dialect, {
        WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true',
        WSOPS_SMTP_URL: smtpUrl,
        WSOPS_ALERT_FROM: 'alerts@example.com',
        WSOPS_ALERT_FAILING_AFTER_MINUTES: '5',
      });
      mailer = await createAlertTransport(smtpUrl);
      rx = await new Receiver().start();
      dispatcher = new Dispatcher(h.services, { random: () => 0 });
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
    const recipient = (ws: string, email: string) =>
      addAlertRecipient(h.services.database.db, { workspaceId: ws, email, actor: 'cli', now: h.clock() });

    it('a workspace without console admins mails its added recipient; the failing alert comes after the set threshold', async () => {
      const ws = await h.workspace({ seed: false });
      assert.deepEqual(await recipient(ws, ' Team@Example.com '), ['team@example.com']);
      assert.deepEqual(await recipient(ws, 'team@example.com'), ['team@example.com'], 'adding again changes nothing');
      const ep = await createEndpoint(h.services, ws, { url: rx.url('/team'), scopes: 'assets:read', events: 'asset.assigned' });
      await drain();
      rx.on('/team', answer(500));
      await h.services.database.db
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
      await drain();
      h.clock.advance(4 * 60_000);
      await runAlertRound(h.services, mailer);
      const about = () => smtp.mails.filter((m) => mailText(m.raw).includes(`Endpoint: ${ep.id}`));
      assert.equal(about().length, 0, 'not before the threshold');
      h.clock.advance(60_000 + 1000);
      await runAlertRound(h.services, mailer);
      const [mail] = about();
      assert.ok(mail);
      assert.deepEqual(mail.to, ['team@example.com']);
      assert.match(mailSubject(mail.raw), new RegExp(`${ep.id} has been failing for over 5 minutes`));
    });

    it('the added recipient gets the real alerts beside the admins; removing it stops that', async () => {
      const ws = await h.workspace({ seed: false });
      const admin = await signedInAdmin(h, ws, { email: 'admin-58@example.com' });
      const added = await admin.post('/console/webhooks/alerts/add', { email: 'oncall@example.com' });
      assert.equal(added.status, 200, added.body);
      assert.match(added.body, /data-recipient="oncall@example.com"/);
      assert.deepEqual(await alertAddresses(h.services.database.db, ws), ['admin-58@example.com', 'oncall@example.com']);
      const bad = await admin.post('/console/webhooks/alerts/add', { email: 'not an address' });
      assert.equal(bad.status, 400);
      assert.match(bad.body, /is not an email address/);

      const ep = await createEndpoint(h.services, ws, { url: rx.url('/both'), scopes: 'assets:read', events: 'asset.assigned' });
      await drain();
      rx.on('/both', answer(500));
      for (let i = 0; i < 20; i++)
        await h.services.database.db
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
      await drain();
      await runAlertRound(h.services, mailer);
      const disabled = smtp.mails.find((m) => mailText(m.raw).includes(`Endpoint: ${ep.id}`) && /was disabled/.test(mailSubject(m.raw)));
      assert.ok(disabled);
      assert.deepEqual([...disabled.to].sort(), ['admin-58@example.com', 'oncall@example.com']);

      const removed = await admin.post('/console/webhooks/alerts/remove', { email: 'oncall@example.com' });
      assert.equal(removed.status, 200);
      assert.deepEqual(await alertAddresses(h.services.database.db, ws), ['admin-58@example.com']);
      await assert.rejects(
        removeAlertRecipient(h.services.database.db, { workspaceId: ws, email: 'oncall@example.com', actor: 'cli', now: h.clock() }),
        /is not an alert recipient/,
      );
    });

    it("send a test alert: through the real SMTP server, with the server's answer; a refusal is reported as refused", async () => {
      const ws = await h.workspace({ seed: false });
      const admin = await signedInAdmin(h, ws, { email: 'tester-58@example.com' });
      await recipient(ws, 'team-58@example.com');
      const page = await admin.post('/console/webhooks/alerts/test');
      assert.equal(page.status, 200, page.body);
      assert.match(page.body, /data-test-alert="sent"/);
      assert.match(page.body, /<code data-server-response>250[^<]*<\/code>/);
      const mail = smtp.mails.at(-1);
      assert.ok(mail);
      assert.match(mailSubject(mail.raw), /Test alert/);
      assert.deepEqual([...mail.to].sort(), ['team-58@example.com', 'tester-58@example.com']);

      smtp.refuse = { at: 'rcpt', code: 550, message: 'mailbox unavailable' };
      try {
        const refused = await sendTestAlert(h.services, ws, 'cli');
        assert.equal(refused.sent, false);
        assert.match(refused.server_response, /550/);
      } finally {
        smtp.refuse = undefined;
      }
    });

    it('wsops alerts recipients and wsops alerts test from the CLI', async () => {
      const ws = await h.workspace({ seed: false });
      const env = {
        ...process.env,
        WSOPS_DATABASE_URL: h.databaseUrl,
        WSOPS_SECRET: TEST_SECRET,
        WSOPS_LOG_LEVEL: 'silent',
        WSOPS_SMTP_URL: smtpUrl,
        WSOPS_ALERT_FROM: 'alerts@example.com',
      };
      // Not spawnSync: the SMTP server answering the CLI runs in this process.
      const run = (...args: string[]) =>
        new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
          const child = spawn(process.execPath, [BIN, ...args], { env });
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (c: Buffer) => {
            stdout += c.toString('utf8');
          });
          child.stderr.on('data', (c: Buffer) => {
            stderr += c.toString('utf8');
          });
          child.on('error', reject);
          child.on('close', (status) => resolve({ status, stdout, stderr }));
        });
      const none = await run('alerts', 'test', '--workspace', ws);
      assert.equal(none.status, 2, none.stderr);
      assert.match(none.stderr, /nobody to mail/);
      const add = await run('alerts', 'recipients', '--workspace', ws, '--add', 'cli-team@example.com', '--json');
      assert.equal(add.status, 0, add.stderr);
      assert.deepEqual(JSON.parse(add.stdout), { admins: [], recipients: ['cli-team@example.com'] });
      const sent = await run('alerts', 'test', '--workspace', ws);
      assert.equal(sent.status, 0, sent.stderr);
      assert.match(sent.stdout, /Test alert sent to cli-team@example\.com\.\nMail server's answer: 250/);
      assert.deepEqual(smtp.mails.at(-1)?.to, ['cli-team@example.com']);
    });
  });
}
