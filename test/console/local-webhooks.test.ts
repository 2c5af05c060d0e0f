/**
 * The console side of testing webhooks locally (issue 27, points 1 and 2), through the real app
 * with a signed-in admin and a real receiver on 127.0.0.1:
 * - on a server without WSOPS_ALLOW_PRIVATE_WEBHOOKS, a refused URL names the rule and the
 *   setting next to the field, and a url_refused delivery says what it means on the deliveries
 *   page and names the rule on the endpoint page;
 * - "Resend verification" sends the endpoint.verification again now (audited), so a receiver
 *   that answered the first before it had the secret becomes active.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifySignature } from '@wsops/client';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { signatureProblem } from '../../src/webhooks/signing/signature.js';
import { signedInAdmin } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { Receiver } from '../helpers/receiver.js';

for (const dialect of DIALECTS) {
  describe(`console: testing webhooks locally [${dialect}]`, () => {
    let rx: Receiver;
    before(async () => {
      rx = await new Receiver().start();
    });
    after(async () => {
      await rx.stop();
    });

    describe('a server without WSOPS_ALLOW_PRIVATE_WEBHOOKS', () => {
      let h: Harness;
      before(async () => {
        h = await createHarness(dialect);
      });
      after(() => h.close());

      it('refuses an http URL on 127.0.0.1 next to the field, naming the rule and the setting', async () => {
        const ws = await h.workspace({ seed: false });
        const admin = await signedInAdmin(h, ws);
        const res = await admin.post('/console/webhooks/new', { url: rx.url('/x'), scopes: ['assets:read'], events: ['asset.assigned'] });
        assert.equal(res.status, 400);
        assert.match(
          res.body,
          /id="f-url-error">webhook URL must use https \(got http:\) \[rule: scheme\]; to deliver to a receiver on this machine/,
        );
        assert.match(res.body, /set WSOPS_ALLOW_PRIVATE_WEBHOOKS=true for the server that delivers/);
        const form = await admin.get('/console/webhooks/new');
        assert.match(form.body, /To test with a receiver on this machine, the server needs WSOPS_ALLOW_PRIVATE_WEBHOOKS=true/);
      });

      it('a url_refused delivery says on the deliveries page what it means and the setting; the endpoint page names the rule', async () => {
        const ws = await h.workspace({ seed: false });
        const admin = await signedInAdmin(h, ws);
        // Registered where the setting was on (another process), delivered by this server, where it is not.
        const config = h.services.config as { allowPrivateWebhooks: boolean };
        config.allowPrivateWebhooks = true;
        const ep = await createEndpoint(h.services, ws, { url: rx.url('/refused'), scopes: 'assets:read', events: 'asset.assigned' });
        config.allowPrivateWebhooks = false;
        const dispatcher = new Dispatcher(h.services, { random: () => 0 });
        try {
          assert.equal(await dispatcher.runOnce(), 1);
        } finally {
          await dispatcher.stop();
        }
        assert.equal(rx.at('/refused').length, 0, 'nothing was sent');
        const deliveries = await admin.get(`/console/webhooks/${ep.id}/deliveries`);
        assert.equal(deliveries.status, 200);
        assert.match(
          deliveries.body,
          /url_refused<br><span class="muted">nothing was sent: the server that delivers refused the endpoint URL/,
        );
        assert.match(deliveries.body, /start that server with WSOPS_ALLOW_PRIVATE_WEBHOOKS=true \(test and development only\)/);
        const page = await admin.get(`/console/webhooks/${ep.id}`);
        assert.match(
          page.body,
          /Last failure: webhook URL must use https \(got http:\) \[rule: scheme\]; to deliver to a receiver on this machine/,
        );
      });
    });

    describe('Resend verification', () => {
      let h: Harness;
      before(async () => {
        h = await createHarness(dialect, { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' });
      });
      after(() => h.close());

      it('sends the endpoint.verification again now: a receiver that answered the first before it had the secret becomes active; the resend is audited', async () => {
        const ws = await h.workspace({ seed: false });
        const admin = await signedInAdmin(h, ws);
        let secret: string | undefined;
        rx.on('/late-secret', (req, res, body) => {
          try {
            if (!secret) throw new Error('no secret yet');
            verifySignature(body, req.headers['x-service-signature'] as string, secret, { now: h.clock() });
            res.writeHead(200).end('ok');
          } catch {
            res.writeHead(400).end('cannot verify');
          }
        });
        const dispatcher = new Dispatcher(h.services, { random: () => 0 });
        try {
          const created = await admin.post('/console/webhooks/new', {
            url: rx.url('/late-secret'),
            scopes: ['assets:read'],
            events: ['asset.assigned'],
          });
          assert.equal(created.status, 200);
          const printed = /value="(whsec_[0-9A-Za-z]+)"/.exec(created.body)?.[1];
          const id = /href="\/console\/webhooks\/(we_[0-9A-Za-z]+)"/.exec(created.body)?.[1] as string;
          assert.ok(printed && id);
          assert.equal(await dispatcher.runOnce(), 1, 'the first verification is attempted');
          assert.equal(rx.at('/late-secret').length, 1);
          const waiting = await admin.get(`/console/webhooks/${id}`);
          assert.match(waiting.body, /Awaiting verification/);
          assert.match(waiting.body, new RegExp(`action="/console/webhooks/${id}/verify"`), 'the button is a form');
          assert.match(waiting.body, />Resend verification</);
          assert.match(waiting.body, /may answer the verification before it has the secret/);

          secret = printed;
          const resent = await admin.post(`/console/webhooks/${id}/verify`);
          assert.equal(resent.status, 303);
          assert.equal(resent.location, `/console/webhooks/${id}?notice=verification_sent`);
          // Due now, not at the first retry a minute later: the clock has not moved.
          assert.equal(await dispatcher.runOnce(), 1, 'the new verification is due at once');
          const active = await admin.get(`/console/webhooks/${id}`);
          assert.match(active.body, />Active</);
          const audit = await h.services.database.db
            .selectFrom('audit_events')
            .select(['action', 'actor', 'target'])
            .where('workspace_id', '=', ws)
            .where('action', '=', 'endpoint.verification_sent')
            .execute();
          assert.deepEqual(audit, [{ action: 'endpoint.verification_sent', actor: `console:${admin.email}`, target: id }]);
        } finally {
          await dispatcher.stop();
        }
      });
    });
  });
}

describe('wsops listen checks signatures as the client package does', () => {
  it('agrees with verifyWebhook on a good signature, a tampered body, a stale timestamp, a rotated secret and a wrong header', async () => {
    const { signatureHeader } = await import('../../src/webhooks/signing/signature.js');
    const body = '{"id":"evt_1","type":"asset.assigned"}';
    const t = 1_800_000_000;
    const cases: [header: string | undefined, rawBody: string, secrets: string[], now: number][] = [
      [signatureHeader(['whsec_a'], t, body), body, ['whsec_a'], t],
      [signatureHeader(['whsec_a'], t, body), `${body} `, ['whsec_a'], t],
      [signatureHeader(['whsec_a'], t, body), body, ['whsec_a'], t + 301],
      [signatureHeader(['whsec_new', 'whsec_old'], t, body), body, ['whsec_old'], t],
      [signatureHeader(['whsec_a'], t, body), body, ['whsec_b'], t],
      [`v1=${'0'.repeat(64)}`, body, ['whsec_a'], t],
      [undefined, body, ['whsec_a'], t],
    ];
    for (const [header, raw, secrets, now] of cases) {
      let clientOk = true;
      try {
        verifySignature(raw, header, secrets, { now: now * 1000 });
      } catch {
        clientOk = false;
      }
      assert.equal(signatureProblem(header, raw, secrets, now) === undefined, clientOk, `${header} ${raw} ${secrets} ${now}`);
    }
  });
});

describe('the developer portal on the first verification and local testing', () => {
  it('says events before activation are not delivered, that a receiver may answer before it has the secret, how to resend, and how to test locally', async () => {
    const { gettingStartedPage } = await import('../../src/developers/portal-routes.js');
    const text = gettingStartedPage('http://localhost:8080');
    assert.match(text, /Events that happen before it is active are not delivered to it/);
    assert.match(text, /Your receiver may answer the verification before it has the secret/);
    assert.match(text, /wsops endpoint verify --workspace W ENDPOINT_ID/);
    assert.match(text, /id="local">Testing webhooks locally/);
    assert.match(text, /WSOPS_ALLOW_PRIVATE_WEBHOOKS=true/);
    assert.match(text, /wsops listen --workspace W/);
  });
});
