/**
 * The failure alerts' settings in the console (Webhooks › Alerts): who the alerts go to (the
 * workspace's console admins, and the addresses added here, e.g. a team mailbox), when the
 * "failing" alert comes (WSOPS_ALERT_FAILING_AFTER_MINUTES, an operator's setting), and "Send a
 * test alert", which mails now through the real path and shows the mail server's answer.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ConsoleServices } from '../console-kit/context.js';
import { type PageContext, pageContext } from '../console-kit/context.js';
import { formValue, textField } from '../console-kit/forms.js';
import { type Html, html } from '../console-kit/html.js';
import { csrfField, layout, sendHtml } from '../console-kit/layout.js';
import { AppError } from '../errors.js';
import { listAdmins } from '../sign-in/admins.js';
import { FAILURES_BEFORE_DISABLE } from '../webhooks/queue/schedule.js';
import { durationWords } from './mail.js';
import { addAlertRecipient, listAlertRecipients, removeAlertRecipient } from './recipients.js';
import { sendTestAlert, type TestAlertResult } from './test-alert.js';

type Notice = { kind: 'success' | 'error' | 'info'; text: string };

function testResult(r: TestAlertResult): Html {
  return html`<section aria-labelledby="test-h" data-test-alert="${r.sent ? 'sent' : 'not-sent'}">
  <h2 id="test-h">Test alert ${r.sent ? 'sent' : 'not sent'}</h2>
  <dl class="facts">
    <dt>Accepted by the server</dt><dd>${r.accepted.join(', ') || 'none'}</dd>
    ${r.rejected.length ? html`<dt>Refused by the server</dt><dd>${r.rejected.join(', ')}</dd>` : ''}
    <dt>Mail server's answer</dt><dd><code data-server-response>${r.server_response}</code></dd>
  </dl>
</section>`;
}

async function alertsPage(ctx: PageContext, extra: { notice?: Notice; result?: TestAlertResult; emailError?: string } = {}): Promise<Html> {
  const { services } = ctx;
  const workspaceId = ctx.admin.workspaceId;
  const [admins, added] = await Promise.all([
    listAdmins(services.database.db, workspaceId),
    listAlertRecipients(services.database.db, workspaceId),
  ]);
  const mailing = services.config.smtpUrl !== undefined;
  const base = '/console/webhooks/alerts';
  return layout(ctx, {
    title: 'Failure alerts',
    nav: 'webhooks',
    notice: extra.notice,
    body: html`<p>An alert is mailed when an endpoint's deliveries have all failed for over ${durationWords(services.config.alertFailingAfterMinutes)}, when it is disabled after ${FAILURES_BEFORE_DISABLE} failures in a row, and when it recovers. ${
      mailing
        ? ''
        : html`<strong>No mail server is set</strong> (<code>WSOPS_SMTP_URL</code>): alerts are shown on each endpoint's page only.`
    }</p>
${extra.result ? testResult(extra.result) : ''}
<section aria-labelledby="recipients-h">
  <h2 id="recipients-h">Recipients</h2>
  <p>Console admins: ${admins.map((a) => a.email).join(', ') || 'none'}.</p>
  ${
    added.length
      ? html`<ul class="recipients">${added.map(
          (email) => html`<li data-recipient="${email}"><code>${email}</code>
    <form method="post" action="${base}/remove" class="inline-form">${csrfField(ctx)}<input type="hidden" name="email" value="${email}"><button type="submit">Remove</button></form></li>`,
        )}</ul>`
      : html`<p class="muted">No other address. Add a team mailbox so that alerts reach someone who is not a console admin.</p>`
  }
  <form method="post" action="${base}/add">${csrfField(ctx)}
    ${textField({ name: 'email', label: 'Also mail alerts to', type: 'email', value: '', errors: extra.emailError ? { email: extra.emailError } : undefined })}
    <button type="submit">Add</button>
  </form>
</section>
<section aria-labelledby="send-h">
  <h2 id="send-h">Check the mail path</h2>
  <p>Sends a test alert now, through the same mail server and to the same recipients as the real alerts, and shows the mail server's answer.</p>
  <form method="post" action="${base}/test">${csrfField(ctx)}<button type="submit" class="primary">Send a test alert</button></form>
</section>`,
  });
}

export function registerAlertPages(scope: FastifyInstance, services: ConsoleServices): void {
  const show = async (reply: FastifyReply, ctx: PageContext, extra: Parameters<typeof alertsPage>[1] = {}, status = 200) =>
    sendHtml(reply, await alertsPage(ctx, extra), status);

  scope.get('/webhooks/alerts', async (request, reply) => show(reply, pageContext(services, request)));

  for (const [path, change, done] of [
    ['add', addAlertRecipient, 'added: it gets the alerts from now on'],
    ['remove', removeAlertRecipient, 'removed'],
  ] as const) {
    scope.post(`/webhooks/alerts/${path}`, async (request, reply) => {
      const ctx = pageContext(services, request);
      const email = formValue(request.body, 'email');
      try {
        const input = { workspaceId: ctx.admin.workspaceId, email, actor: ctx.actor, now: services.clock() };
        await change(services.database.db, input);
        return show(reply, ctx, { notice: { kind: 'success', text: `${email.trim().toLowerCase()} ${done}.` } });
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        return show(reply, ctx, { emailError: err.message }, err.status);
      }
    });
  }

  scope.post('/webhooks/alerts/test', async (request, reply) => {
    const ctx = pageContext(services, request);
    try {
      const result = await sendTestAlert(services, ctx.admin.workspaceId, ctx.actor);
      return show(reply, ctx, { result }, result.sent ? 200 : 502);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return show(reply, ctx, { notice: { kind: 'error', text: err.message } }, err.status);
    }
  });
}
