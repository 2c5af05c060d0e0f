/**
 * GET /metrics on the internal listener: Prometheus text with requests by route and status,
 * latency, 401/403/429 counts, queue depth and endpoints by state, attempts by outcome and error
 * class, commit→attempt latency. Each services object has its own registry.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildInternalApp } from '../../src/http/internal-app.js';
import { Metrics } from '../../src/metrics.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { answer, Receiver } from '../helpers/receiver.js';

/** The value of one series, labels given in any order; undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

for (const dialect of DIALECTS) {
  describe(`metrics [${dialect}]`, () => {
    let h: Harness;
    let internal: FastifyInstance;
    let rx: Receiver;
    before(async () => {
      h = await createHarness(dialect, {
        WSOPS_RATE_LIMIT_PER_SECOND: '1',
        WSOPS_RATE_LIMIT_BURST: '3',
        WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true',
      });
      internal = buildInternalApp(h.services);
      await internal.ready();
      rx = await new Receiver().start();
    });
    after(async () => {
      await rx.stop();
      await internal.close();
      await h.close();
    });
    const scrape = async () => {
      const res = await internal.inject({ method: 'GET', url: '/metrics' });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
      return res.body;
    };

    it('counts public requests by route pattern and status, with a latency histogram and 401/403/429 counts', async () => {
      const ws = await h.workspace({ seed: false });
      const { key } = await h.key(ws);
      const { key: peopleOnly } = await h.key(ws, ['people:read']);
      for (let i = 0; i < 4; i++)
        await h.app.inject({ method: 'GET', url: '/api/v1/assets?limit=1', headers: { authorization: `Bearer ${key}` } });
      assert.equal((await h.app.inject({ method: 'GET', url: '/api/v1/assets' })).statusCode, 401);
      const forbidden = await h.app.inject({ method: 'GET', url: '/api/v1/assets', headers: { authorization: `Bearer ${peopleOnly}` } });
      assert.equal(forbidden.statusCode, 403);
      await h.app.inject({ method: 'GET', url: '/no/such/path/1' });
      await h.app.inject({ method: 'GET', url: '/no/such/path/2' });

      const text = await scrape();
      const route = '/api/v1/assets';
      assert.equal(sample(text, 'wsops_http_requests_total', { method: 'GET', route, status: '200' }), 3);
      assert.equal(sample(text, 'wsops_http_requests_total', { method: 'GET', route, status: '429' }), 1, 'burst 3: the 4th is limited');
      assert.equal(sample(text, 'wsops_http_refused_total', { status: '401', route }), 1);
      assert.equal(sample(text, 'wsops_http_refused_total', { status: '403', route }), 1);
      assert.equal(sample(text, 'wsops_http_refused_total', { status: '429', route }), 1);
      assert.equal(sample(text, 'wsops_http_request_duration_seconds_count', { method: 'GET', route }), 6);
      assert.equal(sample(text, 'wsops_http_request_duration_seconds_bucket', { method: 'GET', route, le: '+Inf' }), 6);
      // Unmatched URLs share one label value, so scanning cannot grow the series without bound.
      assert.equal(sample(text, 'wsops_http_requests_total', { route: 'unmatched', status: '404' }), 2);
      assert.ok(!text.includes('/no/such/path'));
    });

    it('reports queue depth and endpoints by state from the database, and attempts by outcome, error class and commit→attempt latency', async () => {
      const ws = await h.workspace({ seed: false });
      await createEndpoint(h.services, ws, { url: rx.url('/ok'), scopes: 'assets:read', events: 'asset.assigned' });
      rx.on('/down', answer(503));
      await createEndpoint(h.services, ws, { url: rx.url('/down'), scopes: 'assets:read', events: 'asset.assigned' });
      let text = await scrape();
      assert.equal(sample(text, 'wsops_delivery_jobs', { state: 'pending' }), 2, 'one verification job per endpoint');
      assert.equal(sample(text, 'wsops_delivery_jobs', { state: 'succeeded' }), 0);
      assert.equal(sample(text, 'wsops_webhook_endpoints', { state: 'unverified' }), 2);
      assert.equal(sample(text, 'wsops_webhook_endpoints', { state: 'active' }), 0);

      h.clock.advance(40);
      const dispatcher = new Dispatcher(h.services, { observer: h.services.metrics, random: () => 0 });
      assert.equal(await dispatcher.runOnce(), 2);
      text = await scrape();
      assert.equal(sample(text, 'wsops_delivery_attempts_total', { outcome: 'succeeded', error_class: 'none' }), 1);
      assert.equal(sample(text, 'wsops_delivery_attempts_total', { outcome: 'failed', error_class: 'http_status' }), 1);
      assert.equal(sample(text, 'wsops_delivery_commit_to_attempt_seconds_count'), 2);
      assert.equal(sample(text, 'wsops_delivery_commit_to_attempt_seconds_sum'), 0.08, 'two first attempts, 40 ms after commit each');
      assert.equal(sample(text, 'wsops_delivery_jobs', { state: 'pending' }), 1, 'the failed one waits for its retry');
      assert.equal(sample(text, 'wsops_delivery_jobs', { state: 'succeeded' }), 1);
      assert.equal(sample(text, 'wsops_webhook_endpoints', { state: 'active' }), 1);
      assert.equal(sample(text, 'wsops_webhook_endpoints', { state: 'unverified' }), 1);
    });

    it('no longer reports page threads or page slots (ADR 25: pages are read on the event loop)', async () => {
      const text = await scrape();
      assert.equal(sample(text, 'wsops_page_threads_ready'), undefined);
      assert.equal(sample(text, 'wsops_page_slots_held'), undefined);
    });

    it('the operator API counts on the internal listener too, under its route pattern', async () => {
      await internal.inject({ method: 'POST', url: '/internal/v1/actions/asset.return', payload: {} });
      const text = await scrape();
      assert.equal(sample(text, 'wsops_http_refused_total', { status: '403', route: '/internal/v1/actions/:action' }), 1);
      assert.equal(sample(text, 'wsops_http_requests_total', { method: 'GET', route: '/metrics', status: '200' }) !== undefined, true);
    });
  });
}

describe('metrics registries', () => {
  it('each Metrics has its own registry: two side by side do not share counts (no global registry)', async () => {
    const a = new Metrics(undefined);
    const b = new Metrics(undefined);
    a.attempted('succeeded', null, 5);
    assert.equal(sample(await a.text(), 'wsops_delivery_attempts_total', { outcome: 'succeeded' }), 1);
    assert.equal(sample(await b.text(), 'wsops_delivery_attempts_total', { outcome: 'succeeded' }), undefined);
  });
});
