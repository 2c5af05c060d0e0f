/** Per-key token bucket: 429 with Retry-After, RateLimit headers and the key_id; shared via Redis. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/api/app.js';
import { loadConfig } from '../../src/config.js';
import { createServices } from '../../src/services.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness, TEST_SECRET } from '../helpers/harness.js';

const REDIS_URL = process.env.WSOPS_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

for (const dialect of DIALECTS) {
  describe(`rate limits [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    before(async () => {
      h = await createHarness(dialect, { WSOPS_RATE_LIMIT_PER_SECOND: '2', WSOPS_RATE_LIMIT_BURST: '3' });
      ws = await h.workspace({ seed: false });
    });
    after(() => h.close());

    it('429 after the burst, with Retry-After, RateLimit-Policy, RateLimit and the key_id; refills with time', async () => {
      const { key, keyId } = await h.key(ws);
      for (let i = 0; i < 3; i++) {
        const ok = await h.get('/api/v1/scopes', key);
        assert.equal(ok.status, 200);
        assert.equal(ok.headers.ratelimit, `"per-key";r=${2 - i};t=${Math.ceil((i + 1) / 2)}`);
        assert.equal(ok.headers['ratelimit-policy'], '"per-key";q=3;w=2');
      }
      const limited = await h.get('/api/v1/people', key);
      assert.equal(limited.status, 429);
      assert.equal(limited.json.code, 'rate_limited');
      assert.equal(limited.json.key_id, keyId);
      assert.equal(limited.headers['retry-after'], '1');
      assert.ok(limited.headers.ratelimit);
      h.clock.advance(500);
      assert.equal((await h.get('/api/v1/scopes', key)).status, 200, 'one token back after 1/rate seconds');
    });

    it('each key has its own bucket', async () => {
      const a = await h.key(ws);
      const b = await h.key(ws);
      for (let i = 0; i < 3; i++) await h.get('/api/v1/scopes', a.key);
      assert.equal((await h.get('/api/v1/scopes', a.key)).status, 429);
      assert.equal((await h.get('/api/v1/scopes', b.key)).status, 200);
    });

    it('with WSOPS_REDIS_URL, two API processes serving one workspace share one limit per key', async () => {
      const env = {
        WSOPS_DATABASE_URL: h.databaseUrl,
        WSOPS_SECRET: TEST_SECRET,
        WSOPS_REDIS_URL: REDIS_URL,
        WSOPS_RATE_LIMIT_PER_SECOND: '1',
        WSOPS_RATE_LIMIT_BURST: '4',
      };
      const nodes = await Promise.all([0, 1].map(() => createServices(loadConfig(env), { clock: h.clock, migrate: false })));
      const apps = nodes.map((s) => buildApp(s));
      try {
        const { key } = await h.key(ws);
        const statuses: number[] = [];
        for (let i = 0; i < 6; i++) {
          const app = apps[i % 2];
          const res = await app?.inject({ url: '/api/v1/scopes', headers: { authorization: `Bearer ${key}` } });
          statuses.push(res?.statusCode ?? 0);
        }
        assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429]);
      } finally {
        for (const app of apps) await app.close();
        for (const s of nodes) await s.close();
      }
    });
  });
}
