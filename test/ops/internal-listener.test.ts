/**
 * The internal listener: the operator API, /metrics and /readyz are served there only; the
 * public listener answers 404 on them. Failed operator tokens are throttled per address.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { RedisFailureThrottle } from '../../src/guards/failure-throttle.js';
import { buildInternalApp } from '../../src/http/internal-app.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const TOKEN = 'op-0b9f4c2e8a7d6135-f0e1d2c3b4a59687';
const REDIS_URL = process.env.WSOPS_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

for (const dialect of DIALECTS) {
  describe(`internal listener [${dialect}]`, () => {
    let h: Harness;
    let internal: FastifyInstance;
    let base: string;
    before(async () => {
      h = await createHarness(dialect, { WSOPS_OPERATOR_TOKEN: TOKEN });
      internal = buildInternalApp(h.services);
      await internal.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(internal.server.address() as AddressInfo).port}`;
    });
    after(async () => {
      await internal.close();
      await h.close();
    });

    it('the public listener answers 404 not_found (problem+json) on /internal/v1/*, /metrics and /readyz, whatever the token', async () => {
      for (const [method, url] of [
        ['POST', '/internal/v1/actions/asset.return'],
        ['GET', '/internal/v1/actions/asset.return'],
        ['GET', '/metrics'],
        ['GET', '/readyz'],
      ] as const) {
        const res = await h.app.inject({
          method,
          url,
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          payload: method === 'POST' ? '{}' : undefined,
        });
        assert.equal(res.statusCode, 404, `${method} ${url}: ${res.body}`);
        assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
        assert.equal(JSON.parse(res.body).code, 'not_found');
      }
    });

    it('the internal listener serves the operator API over a real socket with the token', async () => {
      const res = await fetch(`${base}/internal/v1/actions/asset.return`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ workspace_id: 'wsp_nowhere', asset: 'ast_x' }),
      });
      assert.equal(res.status, 404);
      const p = (await res.json()) as { code: string; detail: string };
      assert.equal(p.code, 'not_found');
      assert.match(p.detail, /no workspace wsp_nowhere/);
      const health = await fetch(`${base}/healthz`);
      assert.deepEqual(await health.json(), { ok: true });
      const unknown = await fetch(`${base}/api/v1/assets`);
      assert.equal(unknown.status, 404, 'the internal listener does not serve the public API');
    });

    it('/readyz answers 200 {"ok":true,"checks":{"database":{"ok":true}}} when the database answers', async () => {
      const res = await fetch(`${base}/readyz`);
      assert.equal(res.status, 200);
      const body = (await res.json()) as { ok: boolean; checks: Record<string, { ok: boolean; latency_ms: number }> };
      assert.equal(body.ok, true);
      assert.deepEqual(Object.keys(body.checks), ['database']);
      assert.equal(body.checks.database?.ok, true);
      assert.equal(typeof body.checks.database?.latency_ms, 'number');
    });

    it('10 failed tokens from one address: the next request is 429 with Retry-After, even with the right token, until a failure refills (one every 6 s)', async () => {
      const call = (token: string) =>
        internal.inject({
          method: 'POST',
          url: '/internal/v1/actions/asset.return',
          remoteAddress: '10.9.8.7',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ workspace_id: 'wsp_nowhere', asset: 'ast_x' }),
        });
      for (let i = 0; i < 10; i++) assert.equal((await call(`wrong-${i}`)).statusCode, 401);
      h.clock.advance(3_000);
      for (const token of ['wrong-again', TOKEN]) {
        const res = await call(token);
        assert.equal(res.statusCode, 429, res.body);
        assert.equal(res.headers['retry-after'], '3');
        const p = JSON.parse(res.body);
        assert.equal(p.code, 'rate_limited');
        assert.match(p.detail, /Too many failed operator tokens from this address; try again in 3 s/);
      }
      // Another address is not affected.
      const other = await internal.inject({
        method: 'POST',
        url: '/internal/v1/actions/asset.return',
        remoteAddress: '10.9.8.6',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ workspace_id: 'wsp_nowhere', asset: 'ast_x' }),
      });
      assert.equal(other.statusCode, 404);
      h.clock.advance(3_000);
      assert.equal((await call(TOKEN)).statusCode, 404, 'once a failure refilled the right token is accepted again');
      assert.equal((await call('wrong-after')).statusCode, 401, 'the refilled failure is spent');
      assert.equal((await call(TOKEN)).statusCode, 429);
    });

    it('50 concurrent wrong tokens from one address: exactly 10 are answered 401, the other 40 are 429', async () => {
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          internal.inject({
            method: 'POST',
            url: '/internal/v1/actions/asset.return',
            remoteAddress: '10.9.7.1',
            headers: { authorization: `Bearer wrong-${i}`, 'content-type': 'application/json' },
            payload: '{}',
          }),
        ),
      );
      const counts = tally(responses.map((r) => r.statusCode));
      assert.deepEqual(counts, { 401: 10, 429: 40 });
    });

    it('an argument name or value with a control or text-direction character is refused (400) before any query', async () => {
      for (const [args, param] of [
        [{ 'asset\u001b[2J': 'ast_x' }, /argument name/],
        [{ asset: 'ast_x\u202e' }, /the argument asset/],
        [{ asset: 'ast_\u0000x' }, /U\+0000/],
      ] as const) {
        const res = await internal.inject({
          method: 'POST',
          url: '/internal/v1/actions/asset.return',
          remoteAddress: '10.9.7.2',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ workspace_id: 'wsp_nowhere', ...args }),
        });
        assert.equal(res.statusCode, 400, res.body);
        const p = JSON.parse(res.body);
        assert.equal(p.code, 'invalid_parameter');
        assert.match(p.detail, param);
      }
    });

    it('the right token never counts as a failure: 50 accepted requests in a row are never throttled', async () => {
      for (let i = 0; i < 50; i++) {
        const res = await internal.inject({
          method: 'POST',
          url: '/internal/v1/actions/asset.return',
          remoteAddress: '10.9.8.5',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ workspace_id: 'wsp_nowhere', asset: 'ast_x' }),
        });
        assert.equal(res.statusCode, 404);
      }
    });
  });

  describe(`readiness with Redis [${dialect}]`, () => {
    it('/readyz checks Redis when WSOPS_REDIS_URL is set: 200 with a live Redis, 503 {"ok":false} naming the failed check when Redis does not answer', async () => {
      for (const [redisUrl, status] of [
        [REDIS_URL, 200],
        ['redis://127.0.0.1:1', 503],
      ] as const) {
        const h = await createHarness(dialect, { WSOPS_REDIS_URL: redisUrl });
        const internal = buildInternalApp(h.services, { readinessTimeoutMs: 500 });
        try {
          const res = await internal.inject({ method: 'GET', url: '/readyz' });
          assert.equal(res.statusCode, status, res.body);
          const body = JSON.parse(res.body);
          assert.equal(body.ok, status === 200);
          assert.equal(body.checks.database.ok, true);
          assert.equal(body.checks.redis.ok, status === 200);
          if (status === 503) assert.equal(typeof body.checks.redis.error, 'string');
        } finally {
          await internal.close();
          await h.close();
        }
      }
    });

    it('/readyz answers 503 when the database is gone', async () => {
      const h = await createHarness(dialect);
      const internal = buildInternalApp(h.services, { readinessTimeoutMs: 500 });
      try {
        await h.services.database.close();
        const res = await internal.inject({ method: 'GET', url: '/readyz' });
        assert.equal(res.statusCode, 503, res.body);
        const body = JSON.parse(res.body);
        assert.equal(body.ok, false);
        assert.equal(body.checks.database.ok, false);
      } finally {
        await internal.close();
        await h.close().catch(() => {});
      }
    });
  });
}

describe('failed operator tokens with WSOPS_REDIS_URL', () => {
  it('are counted in Redis, so every process sharing it sees the same throttle, also under concurrent failures', async () => {
    const prefix = `wsops:test:fail:${randomBytes(6).toString('hex')}:`;
    const a = new Redis(REDIS_URL);
    const b = new Redis(REDIS_URL);
    try {
      const first = new RedisFailureThrottle(a, prefix);
      const second = new RedisFailureThrottle(b, prefix);
      const budget = (address: string) => [{ key: `operator:${address}`, limit: 3, windowMs: 60_000 }];
      const now = Date.now();
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? first : second).settle(budget('10.0.0.1'), true, now)),
      );
      assert.equal(outcomes.filter((o) => o.allowed).length, 3, 'three failures answered, whichever process counted them');
      const refused = await second.settle(budget('10.0.0.1'), false, now);
      assert.equal(refused.allowed, false, 'the right token too, once the budget is spent');
      assert.equal(refused.retryAfter, 20);
      assert.equal((await first.settle(budget('10.0.0.1'), false, now + 20_000)).allowed, true, 'one failure refilled after 60/3 s');
      assert.equal((await second.settle(budget('10.0.0.2'), false, now)).allowed, true);
    } finally {
      a.disconnect();
      b.disconnect();
    }
  });
});

function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}
