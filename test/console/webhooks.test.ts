/**
 * The webhook and delivery pages of the console, through the real app (inject) with a signed-in
 * admin: registration refusals next to the field with the typed values kept, the secret shown
 * once, another workspace's ids refused, markup shown as text, and the actions as forms with
 * their CSRF token, delivered to a real receiver on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint, disableEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { type SignedInAdmin, signedInAdmin } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { Receiver } from '../helpers/receiver.js';

for (const dialect of DIALECTS) {
  describe(`console webhooks and deliveries [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    let otherWs: string;
    let admin: SignedInAdmin;
    let rx: Receiver;
    let dispatcher: Dispatcher;
    let path = 0;

    before(async () => {
      h = await createHarness(dialect, { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' });
      ws = await h.workspace({ seed: false });
      otherWs = await h.workspace({ seed: false });
      admin = await signedInAdmin(h, ws);
      rx = await new Receiver().start();
      dispatcher = new Dispatcher(h.services, { random: () => 0 });
    });
    after(async () => {
      await dispatcher.stop();
      await rx.stop();
      await h.close();
    });
    beforeEach(async () => {
      const open = await h.services.database.db
        .selectFrom('webhook_endpoints')
        .select(['id', 'workspace_id'])
        .where('status', '!=', 'disabled')
        .execute();
      for (const e of open) await disableEndpoint(h.services, e.workspace_id, e.id);
    });
    const drain = async () => {
      let total = 0;
      for (let n = await dispatcher.runOnce(); n > 0; n = await dispatcher.runOnce()) total += n;
      return total;
    };
    const activeEndpoint = async (workspaceId = ws) => {
      const p = `/console-${++path}`;
      const created = await createEndpoint(h.services, workspaceId, { url: rx.url(p), scopes: 'assets:read', events: 'asset.assigned' });
      await drain();
      return { ...created, path: p };
    };

    it('the list says what to do when there is no endpoint, then shows each with its state and the five-endpoint limit', async () => {
      const empty = await admin.get('/console/webhooks');
      assert.equal(empty.status, 200);
      assert.match(empty.body, /No webhook endpoints yet/);
      assert.match(empty.body, /href="\/console\/webhooks\/new"/);
      const ep = await activeEndpoint();
      const listed = await admin.get('/console/webhooks');
      assert.match(listed.body, /1 of 5 endpoints delivering/);
      assert.ok(listed.body.includes(ep.id));
      assert.match(listed.body, />Active</);
      await disableEndpoint(h.services, ws, ep.id, 'console:someone@example.com');
      assert.match((await admin.get('/console/webhooks')).body, /Disabled by a person/);
    });

    it('a refused registration names the rule next to the field and keeps what was typed, markup as text', async () => {
      const count = async () =>
        (await h.services.database.db.selectFrom('webhook_endpoints').select('id').where('workspace_id', '=', ws).execute()).length;
      const before = await count();
      const typed = 'https://hooks.example.com/<script>alert(1)</script>';
      const res = await admin.post('/console/webhooks/new', {
        url: typed,
        scopes: ['assets:read'],
        events: ['asset.assigned', 'vendor.renewal_approaching'],
      });
      assert.equal(res.status, 400);
      assert.match(res.body, /id="f-events-error">event vendor\.renewal_approaching requires the scope vendors:read/);
      assert.ok(res.body.includes('value="https://hooks.example.com/&lt;script&gt;alert(1)&lt;/script&gt;"'), 'the URL is kept, escaped');
      assert.ok(!res.body.includes('<script>alert(1)'));
      assert.match(res.body, /value="assets:read" checked/);
      assert.match(res.body, /value="vendor\.renewal_approaching" data-scope="vendors:read" checked/);
      const emptyUrl = await admin.post('/console/webhooks/new', { url: '', scopes: ['assets:read'], events: ['asset.assigned'] });
      assert.equal(emptyUrl.status, 400);
      assert.match(emptyUrl.body, /id="f-url-error">webhook URL is empty/);
      assert.equal(await count(), before, 'nothing registered');
    });

    it('registration shows the signing secret once, never cached; the endpoint page never shows it again', async () => {
      const res = await admin.post('/console/webhooks/new', {
        url: rx.url('/registered'),
        scopes: ['assets:read'],
        events: ['asset.assigned'],
      });
      assert.equal(res.status, 200, res.body.slice(0, 500));
      assert.equal(res.headers['cache-control'], 'no-store');
      const secret = /value="(whsec_[0-9A-Za-z]+)"/.exec(res.body)?.[1];
      assert.ok(secret, 'the secret is on the page');
      assert.match(res.body, /shown only once/);
      const id = /href="\/console\/webhooks\/(we_[0-9A-Za-z]+)"/.exec(res.body)?.[1] as string;
      const page = await admin.get(`/console/webhooks/${id}`);
      assert.equal(page.status, 200);
      assert.ok(!page.body.includes(secret));
      assert.match(page.body, /Awaiting verification/);
    });

    it("another workspace's endpoint id is a 404 on every page and action, and changes nothing", async () => {
      const theirs = await activeEndpoint(otherWs);
      for (const url of [`/console/webhooks/${theirs.id}`, `/console/webhooks/${theirs.id}/deliveries`]) {
        assert.equal((await admin.get(url)).status, 404, url);
      }
      for (const action of ['disable', 'test', 'rotate', 'verify']) {
        assert.equal((await admin.post(`/console/webhooks/${theirs.id}/${action}`)).status, 404, action);
      }
      assert.equal((await admin.post(`/console/webhooks/${theirs.id}/recover`, { since: '2020-01-01T00:00' })).status, 404);
      assert.equal((await admin.post(`/console/webhooks/${theirs.id}/deliveries/dlv_x/resend`)).status, 404);
      const row = await h.services.database.db
        .selectFrom('webhook_endpoints')
        .selectAll()
        .where('id', '=', theirs.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.status, 'active');
      assert.equal(await drain(), 0, 'no test event was queued');
    });

    it('send test event, resend and recover are forms with the CSRF token; without it nothing happens', async () => {
      const ep = await activeEndpoint();
      const base = `/console/webhooks/${ep.id}`;
      assert.equal((await admin.post(`${base}/test`, { _csrf: '' })).status, 403);
      assert.equal(await drain(), 0);
      const sent = await admin.post(`${base}/test`);
      assert.equal(sent.status, 303);
      assert.equal(sent.location, `${base}?notice=test_sent`);
      assert.equal(await drain(), 1);
      assert.equal(rx.at(ep.path).filter((r) => r.headers['x-service-event'] === 'endpoint.test').length, 1);

      const list = await admin.get(`${base}/deliveries?event_type=endpoint.test`);
      assert.equal(list.status, 200);
      const deliveryId = /action="[^"]*\/deliveries\/(dlv_[0-9A-Za-z]+)\/resend"/.exec(list.body)?.[1] as string;
      assert.ok(deliveryId, 'a Resend now form per delivery');
      assert.equal((await admin.post(`${base}/deliveries/${deliveryId}/resend`, { _csrf: 'forged' })).status, 403);
      assert.equal(await drain(), 0);
      const resent = await admin.post(`${base}/deliveries/${deliveryId}/resend`);
      assert.equal(resent.status, 303);
      assert.equal(await drain(), 1);
      const tests = rx.at(ep.path).filter((r) => r.headers['x-service-event'] === 'endpoint.test');
      assert.equal(tests.length, 2);
      assert.equal(JSON.parse(tests[1]?.body ?? '{}').id, JSON.parse(tests[0]?.body ?? '{}').id, 'same event id');

      const recovered = await admin.post(`${base}/recover`, { since: '2020-01-01T00:00' });
      assert.equal(recovered.status, 303);
      assert.match(recovered.location, /notice=recovered&count=0$/);
      const bad = await admin.post(`${base}/recover`, { since: 'soon' });
      assert.equal(bad.status, 400);
      assert.match(bad.body, /id="f-since-error">&quot;since&quot; must be a date and time/);
    });

    it('the deliveries page refuses an unknown filter by name, and the endpoint page carries chart data and a table', async () => {
      const ep = await activeEndpoint();
      const bad = await admin.get(`/console/webhooks/${ep.id}/deliveries?outcome=<b>odd</b>`);
      assert.equal(bad.status, 400);
      assert.match(bad.body, /id="f-outcome-error">unknown outcome &quot;&lt;b&gt;odd&lt;\/b&gt;&quot;/);
      const page = await admin.get(`/console/webhooks/${ep.id}?window=7d`);
      assert.equal(page.status, 200);
      const json = /<script type="application\/json" id="delivery-stats">([^<]*)<\/script>/.exec(page.body)?.[1];
      assert.ok(json);
      const stats = JSON.parse(json);
      assert.equal(stats.window, '7d');
      assert.equal(stats.buckets.length, 28);
      // The table collapses each run of periods without an attempt into one row (issue 27).
      const tbody = /<table class="delivery-stats">[\s\S]*?<tbody>([\s\S]*?)<\/tbody>/.exec(page.body)?.[1] ?? '';
      const rows = tbody.match(/<tr/g)?.length ?? 0;
      const withAttempts = stats.buckets.filter((b: { attempts: number }) => b.attempts > 0).length;
      assert.equal(withAttempts, 1, 'the verification');
      assert.ok(rows >= 2 && rows <= 3, `one row with the attempt and at most two collapsed runs, got ${rows}`);
      assert.match(tbody, /No attempts \(\d+ periods\)/);
    });

    it('the endpoint page shows its backlog (due now and how long the oldest has waited) and sets the throttle by form', async () => {
      const ep = await activeEndpoint();
      const base = `/console/webhooks/${ep.id}`;
      const quiet = await admin.get(base);
      assert.match(quiet.body, /<dd data-backlog="due">0 <span class="muted">\(nothing waiting\)<\/span><\/dd>/);
      assert.match(quiet.body, /<dd data-backlog="throttle">None/);
      // Three events due, not yet claimed; 95 s later the page says how long they have waited.
      await admin.post(`${base}/test`);
      await admin.post(`${base}/test`);
      await admin.post(`${base}/test`);
      h.clock.advance(95_000);
      const waiting = await admin.get(base);
      assert.match(waiting.body, /<dd data-backlog="due">3; the oldest has waited <strong data-backlog="age">1 min 35 s<\/strong>/);
      assert.equal(await drain(), 3);
      assert.match((await admin.get(base)).body, /<dd data-backlog="due">0 /);

      assert.equal((await admin.post(`${base}/throttle`, { _csrf: '', max_per_second: '5' })).status, 403, 'CSRF token required');
      const refused = await admin.post(`${base}/throttle`, { max_per_second: '2.5' });
      assert.equal(refused.status, 400);
      assert.match(refused.body, /the throttle must be a whole number of deliveries per second from 1 to 10,000/);
      const saved = await admin.post(`${base}/throttle`, { max_per_second: '5' });
      assert.equal(saved.status, 303);
      assert.equal(saved.location, `${base}?notice=throttle_set`);
      const page = await admin.get(saved.location as string);
      assert.match(page.body, /<dd data-backlog="throttle">At most 5 deliveries per second/);
      assert.match(page.body, /name="max_per_second" type="number" value="5"/);
      const cleared = await admin.post(`${base}/throttle`, { max_per_second: '' });
      assert.equal(cleared.status, 303);
      assert.match((await admin.get(base)).body, /<dd data-backlog="throttle">None/);
      const theirs = await activeEndpoint(otherWs);
      assert.equal((await admin.post(`/console/webhooks/${theirs.id}/throttle`, { max_per_second: '1' })).status, 404);
      const row = await h.services.database.db
        .selectFrom('webhook_endpoints')
        .select('max_per_second')
        .where('id', '=', theirs.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.max_per_second, null, "another workspace's endpoint is untouched");
    });

    it('the Standard Webhooks headers are chosen at registration and on the endpoint page; a tampered choice is refused', async () => {
      const standard = async (id: string) =>
        (
          await h.services.database.db
            .selectFrom('webhook_endpoints')
            .select('standard_webhooks')
            .where('id', '=', id)
            .executeTakeFirstOrThrow()
        ).standard_webhooks;
      const tampered = await admin.post('/console/webhooks/new', {
        url: rx.url('/std-console'),
        scopes: ['assets:read'],
        events: ['asset.assigned'],
        standard_webhooks: 'yes please',
      });
      assert.equal(tampered.status, 400);
      assert.match(tampered.body, /the Standard Webhooks box is either ticked/);
      const res = await admin.post('/console/webhooks/new', {
        url: rx.url('/std-console'),
        scopes: ['assets:read'],
        events: ['asset.assigned'],
        standard_webhooks: 'on',
      });
      assert.equal(res.status, 200, res.body.slice(0, 500));
      assert.match(res.body, /pass it as it is to a <code>standardwebhooks<\/code> library/);
      const id = /href="\/console\/webhooks\/(we_[0-9A-Za-z]+)"/.exec(res.body)?.[1] as string;
      assert.equal(await standard(id), 1);
      const base = `/console/webhooks/${id}`;
      const page = await admin.get(base);
      assert.match(page.body, /<dd data-signatures><code>X-Service-Signature<\/code> and Standard Webhooks<\/dd>/);
      assert.match(page.body, /name="signatures" value="standard" checked/);
      const refused = await admin.post(`${base}/signatures`, { signatures: 'svix' });
      assert.equal(refused.status, 400);
      assert.match(refused.body, /choose the signature headers: &quot;service&quot;/);
      assert.equal(await standard(id), 1, 'a refused choice changes nothing');
      const saved = await admin.post(`${base}/signatures`, { signatures: 'service' });
      assert.equal(saved.status, 303);
      assert.equal(saved.location, `${base}?notice=signatures_set`);
      assert.equal(await standard(id), 0);
      assert.match((await admin.get(base)).body, /<dd data-signatures><code>X-Service-Signature<\/code> only<\/dd>/);
      await disableEndpoint(h.services, ws, id);
    });
  });
}
