/** `wsops key` for issue 29 as an operator runs it: create with --allow-ip, list with last use and --expiring, roll, allow-ip. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { hasValidChecksum } from '../src/keys/key-format.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from './helpers/databases.js';
import { TEST_SECRET } from './helpers/harness.js';

const BIN = new URL('../bin/wsops', import.meta.url).pathname;
const HOUR = 3_600_000;

for (const dialect of DIALECTS) {
  describe(`wsops key (issue 29) [${dialect}]`, () => {
    let db: TestDatabase;
    const run = (...args: string[]) => {
      const r = spawnSync(process.execPath, [BIN, ...args], {
        env: { ...process.env, WSOPS_DATABASE_URL: db.url, WSOPS_SECRET: TEST_SECRET, WSOPS_LOG_LEVEL: 'silent' },
        encoding: 'utf8',
      });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) };
    };
    let ws: string;
    before(async () => {
      db = await createTestDatabase(dialect);
      assert.equal(run('migrate', '--json').status, 0);
      ws = run('workspace', 'create', '--name', 'Acme', '--modules', 'assets', '--json').json().id;
    });
    after(() => db.drop());

    it('key create --allow-ip (repeatable, IPv4 and IPv6) keeps the ranges; the key carries its checksum', () => {
      const created = run(
        'key',
        'create',
        '--workspace',
        ws,
        '--scopes',
        'assets:read',
        '--allow-ip',
        '203.0.113.0/24',
        '--allow-ip',
        '2001:DB8::/48',
        '--json',
      );
      assert.equal(created.status, 0, created.stderr);
      const k = created.json();
      assert.deepEqual(k.allowed_ips, ['203.0.113.0/24', '2001:db8::/48']);
      assert.ok(hasValidChecksum(k.key));
    });

    it('a malformed --allow-ip is refused with exit 2 and says what is wrong', () => {
      const r = run('key', 'create', '--workspace', ws, '--scopes', 'assets:read', '--allow-ip', '10.0.0.0/40');
      assert.equal(r.status, 2);
      assert.match(r.stderr, /"10\.0\.0\.0\/40" is not a CIDR range: the prefix length after "\/" must be a whole number from 0 to 32/);
    });

    it('key list --json has last_used_at and last_used_ip (null until first use) and the marks; --expiring 14d lists what expires', () => {
      const soon = run('key', 'create', '--workspace', ws, '--scopes', 'assets:read', '--days', '10', '--name', 'Soon', '--json').json();
      const listed = run('key', 'list', '--workspace', ws, '--json').json();
      const entry = listed.find((k: { key_id: string }) => k.key_id === soon.key_id);
      assert.deepEqual([entry.last_used_at, entry.last_used_ip, entry.unused, entry.expiring_soon], [null, null, true, true]);
      const expiring = run('key', 'list', '--workspace', ws, '--expiring', '14d', '--json').json();
      assert.deepEqual(
        expiring.map((k: { key_id: string }) => k.key_id),
        [soon.key_id],
      );
      const human = run('key', 'list', '--workspace', ws);
      assert.match(human.stdout, /last_used_ip/);
      assert.match(human.stdout, /expires in 10d; never used/);
      const bad = run('key', 'list', '--workspace', ws, '--expiring', 'two weeks');
      assert.equal(bad.status, 2);
      assert.match(bad.stderr, /--expiring takes a number of days from 1d to 365d, e.g. 14d/);
    });

    it('key roll prints the new key as key create does and revokes the old one after the grace; both valid meanwhile', () => {
      const old = run('key', 'create', '--workspace', ws, '--scopes', 'assets:read', '--name', 'Intranet', '--json').json();
      const before = Date.now();
      const rolled = run('key', 'roll', '--workspace', ws, old.key_id, '--grace', '24h', '--json');
      assert.equal(rolled.status, 0, rolled.stderr);
      const r = rolled.json();
      assert.ok(hasValidChecksum(r.key));
      assert.equal(r.name, 'Intranet');
      assert.deepEqual(r.scopes, ['assets:read']);
      assert.equal(r.rolled_from, old.key_id);
      const revokesAt = Date.parse(r.rolled_from_revoked_at);
      assert.ok(revokesAt >= before + 24 * HOUR && revokesAt <= Date.now() + 24 * HOUR);
      const listed = run('key', 'list', '--workspace', ws, '--json').json();
      assert.deepEqual(
        listed.filter((k: { key_id: string }) => [old.key_id, r.key_id].includes(k.key_id)).map((k: { status: string }) => k.status),
        ['valid', 'valid'],
      );
      const human = run('key', 'roll', '--workspace', ws, r.key_id, '--grace', '0');
      assert.equal(human.status, 0, human.stderr);
      assert.match(human.stdout, /^key_id: {5}\w{16}\nkey: {8}svc_sk_test_/);
      assert.match(human.stdout, new RegExp(`replaces: {3}${r.key_id}`));
      const again = run('key', 'roll', '--workspace', ws, r.key_id);
      assert.equal(again.status, 2);
      assert.match(again.stderr, /is revoked: only a valid key can be rolled/);
      const badGrace = run('key', 'roll', '--workspace', ws, old.key_id, '--grace', '3d');
      assert.equal(badGrace.status, 2);
      assert.match(badGrace.stderr, /grace must be one of 0, 1h, 24h, 7d/);
      const audit = run('audit', '--workspace', ws, '--json');
      assert.match(audit.stdout, /key\.rolled/);
    });

    it('key allow-ip replaces the allowlist; --any removes it', () => {
      const k = run('key', 'create', '--workspace', ws, '--scopes', 'assets:read', '--json').json();
      const set = run('key', 'allow-ip', '--workspace', ws, k.key_id, '--allow-ip', '10.0.0.0/8,192.0.2.7', '--json');
      assert.equal(set.status, 0, set.stderr);
      assert.deepEqual(set.json().allowed_ips, ['10.0.0.0/8', '192.0.2.7/32']);
      const any = run('key', 'allow-ip', '--workspace', ws, k.key_id, '--any', '--json');
      assert.equal(any.json().allowed_ips, null);
      const neither = run('key', 'allow-ip', '--workspace', ws, k.key_id);
      assert.equal(neither.status, 2);
      assert.match(neither.stderr, /give either --allow-ip CIDR \(repeatable\) or --any/);
    });
  });
}
