/**
 * Keys beyond the anchors (issue 29, points 2–6): last use with its address, expiry seen
 * coming, roll with grace, per-key IP allowlists, and the client address behind trusted proxies.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { listAudit } from '../../src/audit/audit.js';
import { buildApp } from '../../src/http/app.js';
import { lastUsesWritten } from '../../src/keys/auth.js';
import { setAllowedIps } from '../../src/keys/key-allowlists.js';
import type { KeySummary } from '../../src/keys/key-summary.js';
import { createKey, listKeys, revokeKey, rollKey } from '../../src/keys/keys.js';
import { createServices } from '../../src/services.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const DAY = 86_400_000;

for (const dialect of DIALECTS) {
  describe(`key lifecycle [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    before(async () => {
      h = await createHarness(dialect, { WSOPS_MAX_KEYS: '4' });
      ws = await h.workspace({ seed: false });
    });
    after(() => h.close());

    const db = () => h.services.database.db;
    const create = (options: { days?: number; allowedIps?: string[]; name?: string } = {}) =>
      createKey(h.services.database, {
        workspaceId: ws,
        scopes: ['people:read'],
        environment: 'test',
        now: h.clock(),
        maxKeys: h.services.config.maxKeys,
        ...options,
      });
    const summary = async (keyId: string): Promise<KeySummary> =>
      (await listKeys(db(), ws, h.clock())).find((k) => k.key_id === keyId) as KeySummary;
    const from = (key: string, remoteAddress: string, url = '/api/v1/scopes') =>
      h.app.inject({ method: 'GET', url, remoteAddress, headers: { authorization: `Bearer ${key}` } });
    const revokeAll = async () => {
      for (const k of await listKeys(db(), ws, h.clock())) if (k.status === 'valid') await revokeKey(db(), ws, k.key_id, h.clock());
    };

    it('last use records when and from which address, null until first use, at most once a minute', async () => {
      const k = await create();
      assert.deepEqual([(await summary(k.key_id)).last_used_at, (await summary(k.key_id)).last_used_ip], [null, null]);
      assert.equal((await from(k.key, '203.0.113.7')).statusCode, 200);
      await h.lastUsesWritten();
      const first = await summary(k.key_id);
      assert.deepEqual([first.last_used_at, first.last_used_ip], [new Date(h.clock()).toISOString(), '203.0.113.7']);
      h.clock.advance(59_000);
      assert.equal((await from(k.key, '198.51.100.9')).statusCode, 200);
      await h.lastUsesWritten();
      assert.deepEqual((await summary(k.key_id)).last_used_ip, '203.0.113.7', 'no write within the minute');
      h.clock.advance(2_000);
      assert.equal((await from(k.key, '2001:db8::9')).statusCode, 200);
      await h.lastUsesWritten();
      const later = await summary(k.key_id);
      assert.deepEqual([later.last_used_at, later.last_used_ip], [new Date(h.clock()).toISOString(), '2001:db8::9']);
      await revokeAll();
    });

    it('last use across two API processes: at most one write per key per minute whichever process serves it', async () => {
      const services = await createServices(h.services.config, { clock: h.clock });
      const other = buildApp(services);
      try {
        const k = await create();
        const viaOther = (ip: string) =>
          other.inject({ method: 'GET', url: '/api/v1/scopes', remoteAddress: ip, headers: { authorization: `Bearer ${k.key}` } });
        assert.equal((await viaOther('192.0.2.1')).statusCode, 200); // B records t0
        await lastUsesWritten(services.database.db);
        h.clock.advance(61_000);
        assert.equal((await from(k.key, '192.0.2.2')).statusCode, 200); // A records t0 + 61 s
        await h.lastUsesWritten();
        const written = await summary(k.key_id);
        assert.equal(written.last_used_ip, '192.0.2.2');
        h.clock.advance(9_000);
        // B last wrote 70 s ago, so it tries; the statement's condition sees A's write 9 s ago.
        assert.equal((await viaOther('192.0.2.3')).statusCode, 200);
        await lastUsesWritten(services.database.db);
        assert.deepEqual(await summary(k.key_id), written, 'the second process wrote nothing within the minute');
      } finally {
        await other.close();
        await services.close();
        await revokeAll();
      }
    });

    it('keys never used, or unused for 30 days, are marked; a use clears the mark', async () => {
      const k = await create();
      assert.equal((await summary(k.key_id)).unused, true, 'never used');
      await from(k.key, '203.0.113.7');
      await h.lastUsesWritten();
      assert.equal((await summary(k.key_id)).unused, false);
      h.clock.advance(30 * DAY + 1000);
      assert.equal((await summary(k.key_id)).unused, true, 'unused for 30 days');
      await revokeAll();
    });

    it('keys expiring within 14 days are flagged and counted in /metrics; revoked or expired ones are not', async () => {
      const metric = async () => {
        const text = await h.services.metrics.registry.metrics();
        return Number(/^wsops_api_keys_expiring_soon (\d+)$/m.exec(text)?.[1]);
      };
      const base = await metric();
      const soon = await create({ days: 14 });
      const later = await create({ days: 15 });
      assert.deepEqual([(await summary(soon.key_id)).expiring_soon, (await summary(later.key_id)).expiring_soon], [true, false]);
      assert.equal(await metric(), base + 1);
      h.clock.advance(DAY + 1000);
      assert.equal((await summary(later.key_id)).expiring_soon, true, 'fifteen days less one');
      assert.equal(await metric(), base + 2);
      await revokeKey(db(), ws, soon.key_id, h.clock());
      assert.equal(await metric(), base + 1, 'a revoked key is not counted');
      await revokeAll();
    });

    it('roll: the successor has the same name, scopes, allowlist and life; both keys work during the grace; then only the successor', async () => {
      const old = await create({ days: 30, name: 'Intranet sync', allowedIps: ['0.0.0.0/0', '::/0'] });
      const { successor, rolled } = await rollKey(h.services.database, {
        workspaceId: ws,
        keyId: old.key_id,
        grace: '1h',
        actor: 'cli',
        now: h.clock(),
        maxKeys: 4,
      });
      assert.notEqual(successor.key_id, old.key_id);
      assert.deepEqual(
        [successor.name, successor.scopes, successor.allowed_ips, Date.parse(successor.expires_at) - h.clock()],
        ['Intranet sync', ['people:read'], ['0.0.0.0/0', '::/0'], 30 * DAY],
      );
      assert.equal(rolled.revoked_at, new Date(h.clock() + 3_600_000).toISOString());
      assert.equal(rolled.status, 'valid');
      assert.deepEqual(
        [(await h.get('/api/v1/scopes', old.key)).status, (await h.get('/api/v1/scopes', successor.key)).status],
        [200, 200],
      );
      h.clock.advance(3_600_000 - 1000);
      assert.deepEqual(
        [(await h.get('/api/v1/scopes', old.key)).status, (await h.get('/api/v1/scopes', successor.key)).status],
        [200, 200],
      );
      h.clock.advance(1000);
      assert.deepEqual(
        [(await h.get('/api/v1/scopes', old.key)).status, (await h.get('/api/v1/scopes', successor.key)).status],
        [401, 200],
      );
      assert.equal((await summary(old.key_id)).status, 'revoked');
      const audit = await listAudit(db(), ws);
      const entry = audit.find((e) => e.action === 'key.rolled' && e.key_id === old.key_id);
      assert.ok(entry, 'the audit trail records the roll');
      assert.match(JSON.stringify(entry), new RegExp(successor.key_id));
      assert.ok(audit.some((e) => e.action === 'key.created' && e.key_id === successor.key_id));
      await revokeAll();
    });

    it('roll with grace 0 revokes the old key at once; a roll works at the plan limit; a revoked or rolled key cannot be rolled', async () => {
      const keys = [await create(), await create(), await create(), await create()];
      const roll = (keyId: string, grace: string) =>
        rollKey(h.services.database, { workspaceId: ws, keyId, grace, actor: 'cli', now: h.clock(), maxKeys: 4 });
      const { successor } = await roll(keys[0]?.key_id as string, '0');
      assert.equal((await h.get('/api/v1/scopes', keys[0]?.key)).status, 401);
      assert.equal((await h.get('/api/v1/scopes', successor.key)).status, 200);
      await roll(keys[1]?.key_id as string, '7d');
      await assert.rejects(roll(keys[1]?.key_id as string, '7d'), /already rolled/);
      await assert.rejects(roll(keys[0]?.key_id as string, '1h'), /is revoked: only a valid key can be rolled/);
      await assert.rejects(roll(keys[2]?.key_id as string, '2h'), /grace must be one of 0, 1h, 24h, 7d/);
      await revokeAll();
    });

    it('IP allowlist: a request from an allowed range (IPv4, IPv6, IPv4-mapped) is served, from elsewhere 403 ip_not_allowed', async () => {
      const k = await create({ allowedIps: ['203.0.113.0/24', '2001:db8::/32'] });
      for (const ip of ['203.0.113.9', '::ffff:203.0.113.9', '2001:db8::5']) assert.equal((await from(k.key, ip)).statusCode, 200, ip);
      const refused = await from(k.key, '198.51.100.1', '/api/v1/people');
      assert.equal(refused.statusCode, 403);
      assert.match(String(refused.headers['content-type']), /application\/problem\+json/);
      const body = refused.json();
      assert.equal(body.code, 'ip_not_allowed');
      assert.equal(body.status, 403);
      assert.match(body.detail, /198\.51\.100\.1/);
      assert.match(body.detail, new RegExp(k.key_id));
      assert.ok(body.request_id);
      assert.equal((await from(k.key, '2001:db9::5')).statusCode, 403);
      // Checked after the key is accepted: a wrong key from elsewhere is the usual 401. (The last
      // character changed to another one: a key ending in x would otherwise stay itself.)
      const wrong = `${k.key.slice(0, -1)}${k.key.endsWith('x') ? 'y' : 'x'}`;
      assert.equal((await from(wrong, '198.51.100.1')).statusCode, 401);
      await revokeAll();
    });

    it('an allowlist change applies from the next request; an empty list accepts any address', async () => {
      const k = await create();
      assert.equal((await from(k.key, '198.51.100.1')).statusCode, 200);
      await setAllowedIps(db(), { workspaceId: ws, keyId: k.key_id, allowedIps: ['10.0.0.0/8'], actor: 'cli', now: h.clock() });
      assert.equal((await from(k.key, '198.51.100.1')).statusCode, 403);
      assert.equal((await from(k.key, '10.2.3.4')).statusCode, 200);
      const cleared = await setAllowedIps(db(), { workspaceId: ws, keyId: k.key_id, allowedIps: [], actor: 'cli', now: h.clock() });
      assert.equal(cleared.allowed_ips, null);
      assert.equal((await from(k.key, '198.51.100.1')).statusCode, 200);
      assert.ok((await listAudit(db(), ws)).some((e) => e.action === 'key.allowlist_changed' && e.key_id === k.key_id));
      await revokeAll();
    });

    it('a malformed CIDR is refused with a message saying what is wrong and the form expected', async () => {
      for (const [bad, why] of [
        ['10.0.0.300/8', /neither IPv4 nor IPv6/],
        ['10.0.0.0/33', /from 0 to 32/],
        ['2001:db8::/129', /from 0 to 128/],
        ['10.0.0.0/8/1', /more than one "\/"/],
      ] as const) {
        await assert.rejects(
          create({ allowedIps: [bad] }),
          (err: Error & { code?: string; extra?: { param?: string } }) =>
            err.code === 'invalid_parameter' &&
            err.extra?.param === 'allowed_ips' &&
            why.test(err.message) &&
            /203\.0\.113\.0\/24/.test(err.message),
          bad,
        );
      }
    });
  });

  describe(`client address behind trusted proxies [${dialect}]`, () => {
    /** A harness listening on 127.0.0.1 (real HTTP): the test is the proxy, or the attacker. */
    async function listening(trusted: string) {
      const h = await createHarness(dialect, { WSOPS_TRUSTED_PROXIES: trusted, WSOPS_AUTH_FAILURES_PER_MINUTE: '5' });
      await h.app.listen({ port: 0, host: '127.0.0.1' });
      const origin = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
      const get = async (key: string, forwardedFor?: string) =>
        (
          await fetch(`${origin}/api/v1/scopes`, {
            headers: { authorization: `Bearer ${key}`, ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
          })
        ).status;
      return { h, get };
    }

    it("behind one trusted proxy, one attacker's failed attempts do not lock out other users", async () => {
      const { h, get } = await listening('127.0.0.1,::1');
      try {
        const ws = await h.workspace({ seed: false });
        const user = await h.key(ws, ['people:read']);
        const wrong = `${user.key.slice(0, -1)}${user.key.endsWith('a') ? 'b' : 'a'}`;
        const attacker = [];
        for (let i = 0; i < 6; i++) attacker.push(await get(wrong, '198.51.100.66'));
        assert.deepEqual(attacker, [401, 401, 401, 401, 401, 429], 'the attacker spends its own budget');
        assert.equal(await get(user.key, '203.0.113.10'), 200, 'another client behind the same proxy is served');
        assert.equal(await get(user.key, '198.51.100.66'), 429, 'the attacker stays throttled, a valid key too');
        await h.lastUsesWritten();
        const k = (await listKeys(h.services.database.db, ws, h.clock())).find((x) => x.key_id === user.keyId);
        assert.equal(k?.last_used_ip, '203.0.113.10', 'last use records the client, not the proxy');
        // A client cannot pick its address by prepending entries: only what the trusted hop added counts.
        assert.equal(await get(wrong, '203.0.113.10, 198.51.100.66'), 429);
        // The allowlist sees the client address too.
        await setAllowedIps(h.services.database.db, {
          workspaceId: ws,
          keyId: user.keyId,
          allowedIps: ['203.0.113.0/24'],
          actor: 'cli',
          now: h.clock(),
        });
        assert.deepEqual([await get(user.key, '203.0.113.10'), await get(user.key, '192.0.2.1')], [200, 403]);
      } finally {
        await h.close();
      }
    });

    it('a forged X-Forwarded-For from an untrusted peer is ignored: it does not evade the throttle or an allowlist', async () => {
      const { h, get } = await listening('10.9.9.9/32');
      try {
        const ws = await h.workspace({ seed: false });
        const user = await h.key(ws, ['people:read']);
        const wrong = `${user.key.slice(0, -1)}${user.key.endsWith('a') ? 'b' : 'a'}`;
        const statuses = [];
        for (let i = 0; i < 6; i++) statuses.push(await get(wrong, `198.51.100.${i + 1}`));
        assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429], 'every forged address counts as the peer');
        const h2 = await listening('10.9.9.9/32');
        try {
          const ws2 = await h2.h.workspace({ seed: false });
          const k = await createKey(h2.h.services.database, {
            workspaceId: ws2,
            scopes: ['people:read'],
            environment: 'test',
            allowedIps: ['203.0.113.0/24'],
            now: h2.h.clock(),
            maxKeys: 10,
          });
          assert.equal(await h2.get(k.key, '203.0.113.10'), 403, 'a forged header does not pass the allowlist');
        } finally {
          await h2.h.close();
        }
      } finally {
        await h.close();
      }
    });
  });
}
