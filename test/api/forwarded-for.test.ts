/**
 * Behind WSOPS_TRUSTED_PROXIES, X-Forwarded-For must name an address before it becomes the
 * client address: a port is dropped as proxies write it, anything else (`unknown`, markup, a
 * hostname) leaves the request with the proxy's own address, said once in the log. Key last
 * use, key IP allowlists, the failed-authentication throttle and console sign-in all see it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { buildApp } from '../../src/http/app.js';
import { checkForwardedFor, forwardedAddress } from '../../src/http/forwarded-for.js';
import { buildInternalApp } from '../../src/http/internal-app.js';
import { setAllowedIps } from '../../src/keys/key-allowlists.js';
import { listKeys } from '../../src/keys/keys.js';
import { encodeForm, signedInAdmin } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

describe('X-Forwarded-For entries', () => {
  it('an address, with or without the port a proxy writes, is that address; anything else is none', () => {
    for (const [entry, address] of [
      ['203.0.113.7', '203.0.113.7'],
      [' 203.0.113.7:8080 ', '203.0.113.7'],
      ['2001:DB8::7', '2001:db8::7'],
      ['[2001:db8::7]:443', '2001:db8::7'],
      ['[::1]', '::1'],
      ['unknown', undefined],
      ['<script>alert(1)</script>', undefined],
      ['proxy.example.com', undefined],
      ['203.0.113.7:', undefined],
      ['999.1.1.1', undefined],
      ['2001:db8::7:443', '2001:db8::7:443'],
    ] as const) {
      assert.equal(forwardedAddress(entry), address, entry);
    }
  });

  it('the walk from the right stops at the first untrusted address, or at an entry that is none (then the hop that passed it on is the client)', () => {
    const trusted = (a: string) => a.startsWith('10.');
    assert.deepEqual(checkForwardedFor('198.51.100.1, 203.0.113.7:8080, 10.0.0.2', trusted), { header: '203.0.113.7, 10.0.0.2' });
    assert.deepEqual(checkForwardedFor('unknown, 10.0.0.2', trusted), { header: '10.0.0.2', rejected: 'unknown' });
    assert.deepEqual(checkForwardedFor('<b>x</b>', trusted), { header: undefined, rejected: '<b>x</b>' });
    // Left of the client nothing is read, so nothing there is refused.
    assert.deepEqual(checkForwardedFor('unknown, 203.0.113.7', trusted), { header: '203.0.113.7' });
  });
});

for (const dialect of DIALECTS) {
  describe(`forwarded client addresses [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    before(async () => {
      h = await createHarness(dialect, { WSOPS_TRUSTED_PROXIES: '127.0.0.1,::1', WSOPS_AUTH_FAILURES_PER_MINUTE: '5' });
      ws = await h.workspace({ seed: false });
    });
    after(() => h.close());

    /** A request the trusted proxy (127.0.0.1, inject's peer) passes on with this X-Forwarded-For. */
    const api = (key: string, forwardedFor?: string) =>
      h.app.inject({
        method: 'GET',
        url: '/api/v1/scopes',
        headers: { authorization: `Bearer ${key}`, ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }) },
      });

    /** The last use is written after the answer: read until it is there. */
    async function lastUsedIp(keyId: string): Promise<string | null | undefined> {
      for (let i = 0; i < 500; i++) {
        const k = (await listKeys(h.services.database.db, ws, h.clock())).find((x) => x.key_id === keyId);
        if (k?.last_used_ip) return k.last_used_ip;
      }
      return undefined;
    }

    it('last use records the address without its port, and the proxy for an entry that is no address', async () => {
      for (const [forwarded, expected] of [
        ['198.51.100.7:8080', '198.51.100.7'],
        ['[2001:db8::7]:443', '2001:db8::7'],
        ['<script>alert(1)</script>', '127.0.0.1'],
        ['unknown', '127.0.0.1'],
      ] as const) {
        const key = await h.key(ws, ['people:read']);
        assert.equal((await api(key.key, forwarded)).statusCode, 200);
        assert.equal(await lastUsedIp(key.keyId), expected, forwarded);
      }
    });

    it('the failed-authentication throttle counts an entry that is no address against the proxy, and an address with a port against the address', async () => {
      const user = await h.key(ws, ['people:read']);
      const wrong = `${user.key.slice(0, -1)}${user.key.endsWith('a') ? 'b' : 'a'}`;
      for (let i = 0; i < 5; i++) assert.equal((await api(wrong, '198.51.100.20:4000')).statusCode, 401);
      assert.equal((await api(user.key, '198.51.100.20')).statusCode, 429, 'the same client, without the port');
      assert.equal((await api(user.key, '198.51.100.21')).statusCode, 200);
      for (let i = 0; i < 5; i++) assert.equal((await api(wrong, `unknown-${i}`)).statusCode, 401);
      assert.equal((await api(user.key)).statusCode, 429, 'those failures were the proxy’s own');
      // The budgets refill within the minute: the next tests start with them full.
      h.clock.advance(60_000);
    });

    it('a key allowlist sees the address a proxy wrote with a port', async () => {
      const key = await h.key(ws, ['people:read']);
      await setAllowedIps(h.services.database.db, {
        workspaceId: ws,
        keyId: key.keyId,
        allowedIps: ['203.0.113.0/24'],
        actor: 'cli',
        now: h.clock(),
      });
      assert.equal((await api(key.key, '203.0.113.10:5555')).statusCode, 200);
      assert.equal((await api(key.key, 'unknown')).statusCode, 403, 'no address: the proxy, outside the list');
    });

    it('console sign-in throttles the forwarded address without its port', async () => {
      const a = await signedInAdmin(h, ws);
      const signIn = (password: string, forwardedFor: string) =>
        h.app.inject({
          method: 'POST',
          url: '/console/sign-in',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': forwardedFor },
          payload: encodeForm({ email: a.email, password }),
        });
      for (let i = 0; i < 5; i++) assert.equal((await signIn('wrong password', `198.51.100.30:${1000 + i}`)).statusCode, 401);
      assert.equal((await signIn(a.password, '198.51.100.30')).statusCode, 429);
    });

    it('the internal listener counts failed operator tokens the same way', async () => {
      const token = 'op-forwarded-for-test-0123456789abcdef';
      const ops = await createHarness(dialect, { WSOPS_TRUSTED_PROXIES: '127.0.0.1,::1', WSOPS_OPERATOR_TOKEN: token });
      const internal = buildInternalApp(ops.services);
      try {
        const call = (bearer: string, forwardedFor?: string) =>
          internal.inject({
            method: 'POST',
            url: '/internal/v1/actions/asset.return',
            headers: {
              authorization: `Bearer ${bearer}`,
              'content-type': 'application/json',
              ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }),
            },
            payload: '{}',
          });
        for (let i = 0; i < 10; i++) assert.equal((await call('wrong', `unknown-${i}`)).statusCode, 401);
        assert.equal((await call(token)).statusCode, 429, 'those failures were the proxy’s own');
        assert.notEqual((await call(token, '198.51.100.40:9000')).statusCode, 429, 'a client behind the proxy is not held');
      } finally {
        await internal.close();
        await ops.close();
      }
    });

    it('the log says once why an entry was not taken, not for every request', async () => {
      const lines: { msg: string; forwarded_entry?: string; proxy?: string }[] = [];
      const app = buildApp(h.services, { logger: pino({ level: 'warn' }, { write: (l: string) => void lines.push(JSON.parse(l)) }) });
      await app.ready();
      try {
        const key = await h.key(ws, ['people:read']);
        for (const entry of ['unknown', '<script>x</script>', 'unknown']) {
          const r = await app.inject({
            method: 'GET',
            url: '/api/v1/scopes',
            headers: { authorization: `Bearer ${key.key}`, 'x-forwarded-for': entry },
          });
          assert.equal(r.statusCode, 200);
        }
        const said = lines.filter((l) => l.msg.includes('X-Forwarded-For'));
        assert.equal(said.length, 1, JSON.stringify(lines));
        assert.equal(said[0]?.forwarded_entry, 'unknown');
        assert.equal(said[0]?.proxy, '127.0.0.1');
        assert.match(said[0]?.msg ?? '', /not an IP address.*WSOPS_TRUSTED_PROXIES/);
      } finally {
        await app.close();
      }
    });
  });
}
