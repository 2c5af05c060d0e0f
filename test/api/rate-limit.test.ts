/**
 * Per-key token bucket: 429 with Retry-After, RateLimit headers and the key_id; shared via Redis.
 * Per-address failed-authentication throttle: once spent, every request from the address is 429.
 */
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { addressBucket } from '../../src/guards/rate-limit.js';
import { buildApp } from '../../src/http/app.js';
import { formatKey } from '../../src/keys/key-format.js';
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

const randomAddress = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(256)}`;

for (const dialect of DIALECTS) {
  describe(`failed-authentication throttle per client address [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    let key: string;
    let wrong: string;
    before(async () => {
      h = await createHarness(dialect, { WSOPS_AUTH_FAILURES_PER_MINUTE: '3' });
      ws = await h.workspace({ seed: false });
      ({ key } = await h.key(ws));
      const [, , , id] = key.split('_');
      wrong = `svc_sk_test_${id}_${'A'.repeat(43)}`;
    });
    after(() => h.close());

    const from = (app: typeof h.app, address: string, k: string) =>
      app.inject({ url: '/api/v1/scopes', remoteAddress: address, headers: { authorization: `Bearer ${k}` } });

    it('after 3 failed authentications in a minute, every request from the address is 429 rate_limited with Retry-After, a valid key too, until it refills', async () => {
      const address = randomAddress();
      for (let i = 0; i < 3; i++) assert.equal((await from(h.app, address, wrong)).statusCode, 401, `failure ${i + 1}`);
      for (const k of [wrong, key]) {
        const res = await from(h.app, address, k);
        assert.equal(res.statusCode, 429, res.body);
        const p = JSON.parse(res.body);
        assert.equal(p.code, 'rate_limited');
        assert.match(p.detail, /failed authentications from this address/);
        assert.equal(res.headers['retry-after'], '20', 'one failure comes back every 60/3 s');
        assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
      }
      h.clock.advance(20_000);
      assert.equal((await from(h.app, address, key)).statusCode, 200, 'a valid key after the refill spends nothing');
      assert.equal((await from(h.app, address, key)).statusCode, 200);
      assert.equal((await from(h.app, address, wrong)).statusCode, 401);
      assert.equal((await from(h.app, address, key)).statusCode, 429, 'the refilled failure was spent again');
    });

    it('successful requests do not spend the budget, and other addresses are unaffected', async () => {
      const address = randomAddress();
      for (let i = 0; i < 10; i++) assert.equal((await from(h.app, address, key)).statusCode, 200);
      for (let i = 0; i < 3; i++) assert.equal((await from(h.app, address, wrong)).statusCode, 401);
      assert.equal((await from(h.app, address, key)).statusCode, 429);
      assert.equal((await from(h.app, randomAddress(), key)).statusCode, 200);
      assert.equal((await from(h.app, randomAddress(), wrong)).statusCode, 401);
    });

    it('30 concurrent wrong keys from one address get exactly 3 answers of 401 and 27 of 429', async () => {
      const address = randomAddress();
      const responses = await Promise.all(Array.from({ length: 30 }, () => from(h.app, address, wrong)));
      assert.deepEqual(tally(responses.map((r) => r.statusCode)), { 401: 3, 429: 27 });
      assert.equal((await from(h.app, address, key)).statusCode, 429, 'a valid key from there waits too');
    });

    it('IPv6 clients are counted per /64 network, IPv4-mapped addresses as IPv4', () => {
      assert.equal(addressBucket('2001:db8:1:2::1'), addressBucket('2001:db8:1:2:ffff::9'));
      assert.notEqual(addressBucket('2001:db8:1:2::1'), addressBucket('2001:db8:1:3::1'));
      assert.equal(addressBucket('2001:0db8:0001:0002:0000:0000:0000:0001'), '2001:db8:1:2::/64');
      assert.equal(addressBucket('::ffff:192.0.2.7'), '192.0.2.7');
      assert.equal(addressBucket('192.0.2.7'), '192.0.2.7');
      assert.equal(addressBucket('::1'), '0:0:0:0::/64');
    });

    it('with WSOPS_REDIS_URL, two API processes share one failure budget per address', async () => {
      const env = {
        WSOPS_DATABASE_URL: h.databaseUrl,
        WSOPS_SECRET: TEST_SECRET,
        WSOPS_REDIS_URL: REDIS_URL,
        WSOPS_AUTH_FAILURES_PER_MINUTE: '4',
      };
      const nodes = await Promise.all([0, 1].map(() => createServices(loadConfig(env), { clock: h.clock, migrate: false })));
      const apps = nodes.map((s) => buildApp(s));
      try {
        const address = randomAddress();
        const statuses: number[] = [];
        for (let i = 0; i < 6; i++) statuses.push((await from(apps[i % 2] as typeof h.app, address, wrong)).statusCode);
        assert.deepEqual(statuses, [401, 401, 401, 401, 429, 429]);
        assert.equal((await from(apps[0] as typeof h.app, address, key)).statusCode, 429);
        assert.equal((await from(apps[1] as typeof h.app, randomAddress(), key)).statusCode, 200);
      } finally {
        for (const app of apps) await app.close();
        for (const s of nodes) await s.close();
      }
    });

    it('with WSOPS_REDIS_URL and a budget of 20, 100 concurrent wrong keys over two processes get exactly 20 answers of 401', async () => {
      const env = {
        WSOPS_DATABASE_URL: h.databaseUrl,
        WSOPS_SECRET: TEST_SECRET,
        WSOPS_REDIS_URL: REDIS_URL,
        WSOPS_AUTH_FAILURES_PER_MINUTE: '20',
      };
      const nodes = await Promise.all([0, 1].map(() => createServices(loadConfig(env), { clock: h.clock, migrate: false })));
      const apps = nodes.map((s) => buildApp(s));
      try {
        const address = randomAddress();
        const responses = await Promise.all(Array.from({ length: 100 }, (_, i) => from(apps[i % 2] as typeof h.app, address, wrong)));
        assert.deepEqual(tally(responses.map((r) => r.statusCode)), { 401: 20, 429: 80 });
      } finally {
        for (const app of apps) await app.close();
        for (const s of nodes) await s.close();
      }
    });

    it('each 401 is logged at debug level with its internal reason and the key id, never the secret', async () => {
      const lines: string[] = [];
      const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(line) });
      const app = buildApp(h.services, { logger });
      try {
        const [, , , id] = key.split('_');
        // Both with a right checksum (issue 29), so that each reaches the check it names.
        const wrongSecret = formatKey('test', id as string, 'A'.repeat(37)).key;
        const unknownId = formatKey('test', 'Z'.repeat(16), 'B'.repeat(37)).key;
        const secret = wrongSecret.split('_').at(-1) as string;
        const cases: [string | undefined, string][] = [
          [wrongSecret, 'wrong secret'],
          [wrong, 'wrong checksum'],
          [unknownId, 'unknown key id'],
          ['not-a-key', 'not of the form'],
          [undefined, 'no Authorization header'],
        ];
        for (const [k, reason] of cases) {
          lines.length = 0;
          const res = await app.inject({
            url: '/api/v1/scopes',
            remoteAddress: randomAddress(),
            headers: k === undefined ? {} : { authorization: `Bearer ${k}` },
          });
          assert.equal(res.statusCode, 401);
          const refusal = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'authentication refused');
          assert.ok(refusal, `a debug line for ${reason}`);
          assert.equal(refusal.level, 20);
          assert.match(refusal.reason, new RegExp(reason));
          assert.ok(refusal.request_id, 'the line carries the request id');
          if (k === wrongSecret || k === wrong) assert.equal(refusal.key_id, id);
          for (const s of [secret, wrong.split('_').at(-1) as string, unknownId.split('_').at(-1) as string]) {
            assert.ok(!lines.join('').includes(s), 'the secret is never logged');
          }
        }
      } finally {
        await app.close();
      }
    });
  });
}

function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}
