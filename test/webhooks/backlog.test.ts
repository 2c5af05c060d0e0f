/**
 * The backlog you can see (issue 26): /metrics reports the age of the oldest due delivery,
 * overall and per workspace, and each endpoint's recent attempts, success ratio and mean
 * latency, with bounded labels (the top 20 by name, the rest as "other"); the endpoint
 * reads of the console count what is due, in flight and waiting for a retry.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildInternalApp } from '../../src/http/internal-app.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { endpointBacklog } from '../../src/webhooks/queue/backlog.js';
import { BACKLOG_LABELS_TOP } from '../../src/webhooks/queue/backlog-metrics.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { answer, Receiver } from '../helpers/receiver.js';

/** Every sample of one metric: label set → value. */
function samples(text: string, name: string): { labels: Record<string, string>; value: number }[] {
  const out: { labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    out.push({ labels: Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]])), value: Number(m[3]) });
  }
  return out;
}

for (const dialect of DIALECTS) {
  describe(`delivery backlog you can see [${dialect}]`, () => {
    let h: Harness;
    let internal: FastifyInstance;
    let rx: Receiver;
    before(async () => {
      h = await createHarness(dialect, { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' });
      internal = buildInternalApp(h.services);
      await internal.ready();
      rx = await new Receiver().start();
    });
    after(async () => {
      await rx.stop();
      await internal.close();
      await h.close();
    });
    const scrape = async () => (await internal.inject({ method: 'GET', url: '/metrics' })).body;
    const subscribe = { scopes: 'assets:read', events: 'asset.assigned' };

    it('reports the oldest due delivery overall and per workspace (top 20, the rest as "other"), then each endpoint\'s outcomes', async () => {
      const text0 = await scrape();
      assert.equal(samples(text0, 'wsops_delivery_oldest_due_age_seconds')[0]?.value, 0, 'nothing due: 0');
      assert.equal(samples(text0, 'wsops_delivery_workspace_due').length, 0);
      // One verification job due per endpoint; workspace i's became due i seconds after the first.
      const workspaces: string[] = [];
      const endpoints: string[] = [];
      const start = h.clock();
      const total = BACKLOG_LABELS_TOP + 3;
      for (let i = 0; i < total; i++) {
        const ws = await h.workspace({ seed: false });
        workspaces.push(ws);
        rx.on(`/b-${i}`, answer(i === 0 ? 503 : 200));
        endpoints.push((await createEndpoint(h.services, ws, { url: rx.url(`/b-${i}`), ...subscribe })).id);
        h.clock.advance(1000);
      }
      h.clock.set(start + 60_000);
      const text = await scrape();
      assert.equal(samples(text, 'wsops_delivery_oldest_due_age_seconds')[0]?.value, 60);
      const ages = samples(text, 'wsops_delivery_workspace_oldest_due_age_seconds');
      const dues = samples(text, 'wsops_delivery_workspace_due');
      assert.equal(ages.length, BACKLOG_LABELS_TOP + 1, 'bounded: the top 20 and "other"');
      assert.deepEqual(
        ages.find((s) => s.labels.workspace === workspaces[0]),
        { labels: { workspace: workspaces[0] }, value: 60 },
        'the longest waiting is named',
      );
      assert.equal(ages.find((s) => s.labels.workspace === workspaces[1])?.value, 59);
      assert.equal(
        ages.find((s) => s.labels.workspace === workspaces[total - 1]),
        undefined,
        'the newest are not named',
      );
      assert.equal(ages.find((s) => s.labels.workspace === 'other')?.value, 60 - (total - 3), 'other: the oldest of the rest');
      assert.equal(dues.find((s) => s.labels.workspace === 'other')?.value, 3, 'other: the rest summed');
      assert.equal(
        dues.reduce((n, s) => n + s.value, 0),
        total,
      );

      // Delivered: nothing is due any more; each endpoint's outcomes are reported, bounded too.
      const d = new Dispatcher(h.services, { random: () => 0 });
      while ((await d.runOnce()) > 0);
      const after = await scrape();
      assert.equal(samples(after, 'wsops_delivery_oldest_due_age_seconds')[0]?.value, 0);
      assert.equal(samples(after, 'wsops_delivery_workspace_due').length, 0, 'series of workspaces no longer due are dropped');
      const attempts = samples(after, 'wsops_endpoint_attempts');
      assert.equal(attempts.length, BACKLOG_LABELS_TOP + 1, 'bounded: the top 20 and "other"');
      assert.equal(
        attempts.reduce((n, s) => n + s.value, 0),
        total,
        'every attempt counted once',
      );
      const ratio = samples(after, 'wsops_endpoint_success_ratio');
      const failing = ratio.find((s) => s.labels.endpoint === endpoints[0]);
      // The failing endpoint has as many attempts as the others, so it may be named or in "other".
      if (failing) assert.equal(failing.value, 0);
      else assert.ok((ratio.find((s) => s.labels.endpoint === 'other')?.value ?? 1) < 1);
      assert.equal(ratio.filter((s) => s.value === 1).length >= BACKLOG_LABELS_TOP - 1, true);
      const latency = samples(after, 'wsops_endpoint_mean_latency_seconds');
      assert.equal(latency.length, BACKLOG_LABELS_TOP + 1);
      assert.ok(latency.every((s) => s.value >= 0 && s.value < 10));
    });

    it("an endpoint's backlog counts what is due (and since when), what is in flight and what waits for a retry", async () => {
      const ws = await h.workspace({ seed: false });
      rx.on('/one', answer(503));
      const ep = await createEndpoint(h.services, ws, { url: rx.url('/one'), ...subscribe });
      const due = await endpointBacklog(h.services.database, ep.id, h.clock() + 5000);
      assert.deepEqual(due, {
        due: 1,
        oldest_due_at: new Date(h.clock()).toISOString(),
        oldest_due_age_seconds: 5,
        in_flight: 0,
        retrying: 0,
      });
      await new Dispatcher(h.services, { random: () => 0 }).runOnce();
      const retry = await endpointBacklog(h.services.database, ep.id, h.clock());
      assert.deepEqual(retry, { due: 0, oldest_due_at: null, oldest_due_age_seconds: 0, in_flight: 0, retrying: 1 }, 'failed: waits 1 min');
    });
  });
}
