/**
 * What the background work does once, raced between several workers on one database
 * (docs/guarantees.md): a vendor's renewal notice (one event per vendor and renewal date) and
 * an endpoint's failure alert (one per endpoint, stage and failure episode, mailed once). The
 * workers' timers cannot be made to fire together, so their rounds are called at once from two
 * separate sets of services (two pools, as two worker processes have), and the operator's
 * `wsops renewals check` is run as several processes at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Transporter } from 'nodemailer';
import { createAlertTransport } from '../../src/alerts/mail.js';
import { runAlertRound } from '../../src/alerts/send.js';
import { loadConfig } from '../../src/config.js';
import { createServices, type Services } from '../../src/services.js';
import { createAdminLink } from '../../src/sign-in/sign-in-links.js';
import { createEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { checkRenewals } from '../../src/webhooks/events/renewals.js';
import { putRecord, registerNamed } from '../../src/writes/record-writes.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness, TEST_SECRET } from '../helpers/harness.js';
import { runWsops } from '../helpers/processes.js';
import { Rounds } from '../helpers/races.js';
import { SmtpSink } from '../helpers/smtp.js';
import { vendor } from '../writes/helpers.js';

const ROUNDS = 5;
const VENDORS = 6;
const DAY_MS = 86_400_000;

for (const dialect of DIALECTS) {
  describe(`once only across workers [${dialect}]`, () => {
    let h: Harness;
    let smtp: SmtpSink;
    let workers: Services[] = [];
    const transports: Transporter[] = [];
    before(async () => {
      smtp = await new SmtpSink().start();
      const env = {
        WSOPS_SECRET: TEST_SECRET,
        WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true',
        WSOPS_SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
        WSOPS_ALERT_FROM: 'wsops <alerts@example.com>',
      };
      h = await createHarness(dialect, env);
      const config = loadConfig({ ...env, WSOPS_DATABASE_URL: h.databaseUrl });
      workers = [await createServices(config), await createServices(config)];
      for (let i = 0; i < workers.length; i++) transports.push(await createAlertTransport(config.smtpUrl as string));
    });
    after(async () => {
      for (const t of transports) t.close();
      await Promise.all(workers.map((w) => w.close()));
      await h?.close();
      await smtp?.stop();
    });

    /** A workspace whose VENDORS vendors' cancellation deadlines are 10 days away (inside the 30-day window). */
    async function workspaceWithRenewals(): Promise<string> {
      const ws = await h.workspace({ seed: false });
      const renewal = new Date(Date.now() + 40 * DAY_MS).toISOString().slice(0, 10);
      for (let i = 0; i < VENDORS; i++) {
        await putRecord(
          h.services,
          ws,
          registerNamed('vendors'),
          `ven_notice_${i}`,
          vendor(`ven_notice_${i}`, { renewal_date: renewal, notice_period_days: 30 }),
        );
      }
      return ws;
    }

    async function notices(ws: string) {
      const events = await h.services.database.db
        .selectFrom('events')
        .select('id')
        .where('workspace_id', '=', ws)
        .where('type', '=', 'vendor.renewal_approaching')
        .execute();
      const rows = await h.services.database.db.selectFrom('renewal_notices').select('event_id').where('workspace_id', '=', ws).execute();
      return { events: events.length, rows: rows.length, linked: rows.filter((r) => events.some((e) => e.id === r.event_id)).length };
    }

    it('renewal notices: eight renewal checks at once from two workers make one event per vendor and renewal date', async () => {
      const rounds = new Rounds(ROUNDS);
      for (let r = 0; r < ROUNDS; r++) {
        const ws = await workspaceWithRenewals();
        const results = await Promise.all(Array.from({ length: 8 }, (_, i) => checkRenewals(workers[i % 2] as Services, ws)));
        const emitted = results.reduce((n, x) => n + x.events.length, 0);
        const seen = await notices(ws);
        rounds.record(
          r,
          emitted === VENDORS && seen.events === VENDORS && seen.rows === VENDORS && seen.linked === VENDORS,
          `${emitted} emitted by the checks; ${seen.events} events, ${seen.rows} notices (${seen.linked} naming their event)`,
        );
      }
      assert.equal(rounds.broken.length, 0, rounds.summary('renewal notices'));
    });

    it('renewal notices: four `wsops renewals check` processes at once make one event per vendor', async () => {
      const ws = await workspaceWithRenewals();
      const env = { WSOPS_DATABASE_URL: h.databaseUrl, WSOPS_SECRET: TEST_SECRET, WSOPS_DEMO: 'false', WSOPS_LOG_LEVEL: 'error' };
      const outs = await Promise.all(Array.from({ length: 4 }, () => runWsops(['renewals', 'check', '--workspace', ws, '--json'], env)));
      const emitted = outs.reduce((n, out) => n + (JSON.parse(out) as { events: unknown[] }).events.length, 0);
      const seen = await notices(ws);
      assert.deepEqual({ emitted, events: seen.events, rows: seen.rows }, { emitted: VENDORS, events: VENDORS, rows: VENDORS });
    });

    it('failure alerts: eight alert rounds at once from two workers record one alert per endpoint and stage, and mail each once', async () => {
      const rounds = new Rounds(ROUNDS);
      for (let r = 0; r < ROUNDS; r++) {
        const ws = await h.workspace({ seed: false });
        await createAdminLink(h.services.database, { workspaceId: ws, email: `alerted-${r}@example.com`, actor: 'cli', now: Date.now() });
        // Three endpoints failing for two hours, one disabled after its failures: four alerts due.
        const since = new Date(Date.now() - h.services.config.alertFailingAfterMinutes * 60_000 * 2).toISOString();
        const ids: string[] = [];
        for (let i = 0; i < 4; i++) {
          const e = await createEndpoint(h.services, ws, {
            url: `http://127.0.0.1:9/hook${i}`,
            scopes: 'vendors:read',
            events: 'vendor.renewal_approaching',
          });
          ids.push(e.id);
          await h.services.database.db
            .updateTable('webhook_endpoints')
            .set(
              i < 3
                ? { status: 'active', failing_since: since, consecutive_failures: 5, last_failure: 'HTTP 500' }
                : {
                    status: 'disabled',
                    disabled_reason: 'failures',
                    failing_since: since,
                    consecutive_failures: 20,
                    last_failure: 'HTTP 500',
                  },
            )
            .where('id', '=', e.id)
            .execute();
        }
        const mailsBefore = smtp.mails.length;
        await Promise.all(Array.from({ length: 8 }, (_, i) => runAlertRound(workers[i % 2] as Services, transports[i % 2])));
        const alerts = await h.services.database.db
          .selectFrom('endpoint_alerts')
          .select(['state'])
          .where('workspace_id', '=', ws)
          .execute();
        const sent = alerts.filter((a) => a.state === 'sent').length;
        const mailed = smtp.mails.length - mailsBefore;
        const audited = (
          await h.services.database.db
            .selectFrom('audit_events')
            .select('id')
            .where('workspace_id', '=', ws)
            .where('action', '=', 'endpoint.alert_sent')
            .execute()
        ).length;
        rounds.record(
          r,
          alerts.length === 4 && sent === 4 && mailed === 4 && audited === 4,
          `${alerts.length} alerts (${sent} sent), ${mailed} mails, ${audited} audited`,
        );
      }
      assert.equal(rounds.broken.length, 0, rounds.summary('failure alerts'));
    });
  });
}
