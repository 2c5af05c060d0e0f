/** The console's Overview (requests per key, endpoint health, limits) and audit trail pages, through the real app. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/ids.js';
import { createKey, revokeKey } from '../../src/keys/keys.js';
import { READ_SCOPES } from '../../src/registers/define.js';
import { createEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { signedInAdmin } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const MARKUP = '<img src=x onerror=alert(1)></script><script>alert(2)</script>';

for (const dialect of DIALECTS) {
  describe(`console Overview and audit trail [${dialect}]`, () => {
    let h: Harness;
    before(async () => {
      h = await createHarness(dialect, { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true', WSOPS_MAX_KEYS: '60' });
    });
    after(() => h.close());

    const key = (workspaceId: string, name: string, createdBy = 'cli') =>
      createKey(h.services.database, {
        workspaceId,
        scopes: [...READ_SCOPES],
        environment: 'test',
        name,
        createdBy,
        now: h.clock(),
        maxKeys: h.services.config.maxKeys,
      });

    it('a new workspace gets "Getting started" with links to create a key and register an endpoint, and its limits', async () => {
      const ws = await h.workspace({ seed: false });
      const admin = await signedInAdmin(h, ws);
      const page = await admin.get('/console');
      assert.equal(page.status, 200, page.body);
      assert.match(page.body, /<h2 id="start-title">Getting started<\/h2>/);
      assert.match(page.body, /href="\/console\/keys">Create an API key<\/a>/);
      assert.match(page.body, /href="\/console\/webhooks\/new">Register a webhook endpoint<\/a>/);
      assert.match(page.body, /0 of 60<\/strong> API keys/);
      assert.match(page.body, /0 of 5<\/strong> webhook endpoints delivering/);
      assert.match(page.body, /No API requests in this range/);
    });

    it('requests per key appear after they are written (once a minute), as a table and as escaped chart data', async () => {
      const ws = await h.workspace({ seed: false });
      const admin = await signedInAdmin(h, ws);
      const k = await key(ws, MARKUP);
      const quiet = await key(ws, 'Unused key');
      for (let i = 0; i < 3; i++) assert.equal((await h.get('/api/v1/scopes', k.key)).status, 200);
      let page = await admin.get('/console');
      assert.match(page.body, /No API requests in this range/, 'nothing is shown before the counts are written');
      await h.services.usage.flush();
      page = await admin.get('/console');
      assert.equal(page.status, 200);
      assert.doesNotMatch(page.body, /Getting started[\s\S]*Create an API key/);
      assert.match(page.body, /2 of 60<\/strong> API keys/);
      assert.match(
        page.body,
        new RegExp(`<code>${k.key_id}</code> &lt;img src=x onerror=alert\\(1\\)&gt;&lt;/script&gt;[\\s\\S]*?<td class="num">3</td>`),
      );
      assert.ok(!page.body.includes(quiet.key_id), 'a key without requests has no row');
      const data = /<script type="application\/json" id="usage-data">([^<]*)<\/script>/.exec(page.body);
      assert.ok(data, 'the chart data block is present and nothing in it closes the element');
      const parsed = JSON.parse(data[1] as string);
      assert.equal(parsed.series[0].label, `${MARKUP} (${k.key_id})`);
      assert.equal(
        parsed.series[0].data.reduce((a: number, b: number) => a + b, 0),
        3,
      );
      assert.equal(parsed.x.length, 24);
      const week = await admin.get('/console?range=7d');
      assert.equal(JSON.parse(/id="usage-data">([^<]*)</.exec(week.body)?.[1] as string).x.length, 168);
      assert.match(week.body, /aria-current="page">Last 7 days/);
      const wrong = await admin.get('/console?range=1y');
      assert.equal(wrong.status, 400);
      assert.match(wrong.body, /The range must be 24h or 7d/);
    });

    it("endpoint health: state in words, last success, failures in a row, 24 h success rate; another workspace's usage never shows", async () => {
      const ws = await h.workspace({ seed: false });
      const other = await h.workspace({ seed: false });
      const admin = await signedInAdmin(h, ws);
      const ep = await createEndpoint(h.services, ws, { url: 'http://127.0.0.1:9/hook', scopes: 'assets:read', events: 'asset.assigned' });
      const db = h.services.database.db;
      const at = (msAgo: number) => new Date(h.clock() - msAgo).toISOString();
      for (const [ago, outcome] of [
        [2 * 3_600_000, 'succeeded'],
        [3_600_000, 'failed'],
      ] as const) {
        await db
          .insertInto('delivery_attempts')
          .values({
            id: newId('dlv'),
            job_id: newId('job'),
            workspace_id: ws,
            event_id: newId('evt'),
            event_type: 'asset.assigned',
            endpoint_id: ep.id,
            attempt: 1,
            attempted_at: at(ago),
            status_code: outcome === 'succeeded' ? 200 : 500,
            outcome,
            error_class: outcome === 'succeeded' ? null : 'http_status',
            latency_ms: 40,
            response_body: null,
            next_attempt_at: null,
          })
          .execute();
      }
      await db.updateTable('webhook_endpoints').set({ consecutive_failures: 1 }).where('id', '=', ep.id).execute();
      const foreign = await key(other, 'Other workspace key');
      await h.get('/api/v1/scopes', foreign.key);
      await h.services.usage.flush();
      const page = await admin.get('/console');
      assert.match(page.body, new RegExp(`href="/console/webhooks/${ep.id}">http://127.0.0.1:9/hook</a>`));
      assert.match(page.body, /Awaiting verification/);
      assert.match(page.body, new RegExp(`<time datetime="${at(2 * 3_600_000)}">`));
      assert.match(page.body, /<td class="num">1<\/td>\s*<td class="num">50% of 2<\/td>/);
      assert.match(page.body, /1 of 5<\/strong> webhook endpoints delivering/);
      assert.ok(!page.body.includes(foreign.key_id), "another workspace's key is not shown");
      assert.match(page.body, /No API requests in this range/);
    });

    it('the audit trail says who did what, filters by kind and actor, pages with "Older entries", and shows markup as text', async () => {
      const ws = await h.workspace({ seed: false });
      const other = await h.workspace({ seed: false });
      const admin = await signedInAdmin(h, ws);
      const actor = `console:${admin.email}`;
      const marked = await key(ws, MARKUP, actor);
      const created: string[] = [];
      for (let i = 0; i < 55; i++) created.push((await key(ws, `Batch ${i}`)).key_id);
      await revokeKey(h.services.database.db, ws, marked.key_id, h.clock(), actor);
      const foreign = await key(other, 'Foreign key', 'cli');

      const first = await admin.get('/console/audit');
      assert.equal(first.status, 200, first.body);
      assert.match(first.body, new RegExp(`Revoked API key ${marked.key_id}`));
      assert.ok(!first.body.includes(foreign.key_id), "another workspace's entries are never shown");
      assert.ok(!first.body.includes('<img src=x'), 'markup in a key name is never markup');
      const older = /<a href="([^"]+)" rel="next">Older entries<\/a>/.exec(first.body);
      assert.ok(older, 'an Older entries link');
      const second = await admin.get((older[1] as string).replace(/&amp;/g, '&'));
      assert.equal(second.status, 200);
      assert.match(second.body, new RegExp(`Created API key ${marked.key_id} \\(&lt;img src=x onerror=alert\\(1\\)&gt;&lt;/script&gt;`));
      assert.match(second.body, /Newest entries/);
      for (const id of created) assert.ok(first.body.includes(id) !== second.body.includes(id), `${id} is on exactly one page`);

      const byAdmin = await admin.get(`/console/audit?kind=key&actor=${encodeURIComponent(actor)}`);
      assert.equal(byAdmin.status, 200);
      assert.equal(
        (byAdmin.body.match(/<tr>\s*<td class="nowrap">/g) ?? []).length,
        2,
        'the created and revoked entries of this admin only',
      );
      assert.match(byAdmin.body, new RegExp(`<option value="${actor}" selected>`));
      assert.doesNotMatch(byAdmin.body, /rel="next"/);
      const operator = await admin.get('/console/audit?actor=operator&kind=admin');
      assert.match(
        operator.body,
        new RegExp(`Invited console admin ${admin.email.replace(/\./g, '\\.')}`),
        'the CLI invitation, as the operator',
      );
      assert.match(operator.body, /Operator \(CLI\)/);

      const none = await admin.get('/console/audit?kind=module');
      assert.match(none.body, /No entry matches these filters/);
      assert.match(none.body, /href="\/console\/audit">Show the whole trail/);
      const bad = await admin.get('/console/audit?kind=payroll&before=abc');
      assert.equal(bad.status, 400);
      assert.match(bad.body, /&quot;payroll&quot; is not a kind of entry/);
      assert.match(bad.body, /The page link is damaged/);
    });
  });
}
