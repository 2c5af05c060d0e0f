/** The webhook commands of the operator CLI, as real processes: JSON shapes and exit status 2 with the rule that refused. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { TEST_SECRET } from '../helpers/harness.js';
import { Receiver } from '../helpers/receiver.js';

const BIN = new URL('../../bin/wsops', import.meta.url).pathname;

describe('wsops endpoint, deliveries and renewals commands [sqlite]', () => {
  let db: TestDatabase;
  let rx: Receiver;
  let ws: string;
  const run = (env: Record<string, string>, ...args: string[]) => {
    const r = spawnSync(process.execPath, [BIN, ...args], {
      env: { ...process.env, WSOPS_DATABASE_URL: db.url, WSOPS_SECRET: TEST_SECRET, WSOPS_LOG_LEVEL: 'silent', ...env },
      encoding: 'utf8',
    });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) };
  };
  const dev = { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' };

  before(async () => {
    db = await createTestDatabase('sqlite');
    rx = await new Receiver().start();
    ws = run({}, 'workspace', 'create', '--name', 'Hooks', '--json').json().id;
  });
  after(async () => {
    await rx.stop();
    await db.drop();
  });

  it('endpoint create prints the id, the secret once and status unverified; list, disable and enable follow the states', () => {
    const created = run(
      dev,
      'endpoint',
      'create',
      '--workspace',
      ws,
      '--url',
      rx.url('/cli'),
      '--scopes',
      'assets:read',
      '--events',
      'asset.assigned',
      '--json',
    );
    assert.equal(created.status, 0, created.stderr);
    const ep = created.json();
    assert.match(ep.id, /^we_/);
    assert.match(ep.secret, /^whsec_/);
    assert.equal(ep.status, 'unverified');
    const listed = run(dev, 'endpoint', 'list', '--workspace', ws, '--json');
    assert.ok(!listed.stdout.includes(ep.secret), 'the secret is never shown again');
    assert.deepEqual(
      listed.json().map((e: { id: string; status: string }) => [e.id, e.status]),
      [[ep.id, 'unverified']],
    );
    const disabled = run(dev, 'endpoint', 'disable', '--workspace', ws, ep.id, '--json').json();
    assert.equal(disabled.status, 'disabled');
    assert.equal(disabled.disabled_reason, 'user');
    const enabled = run(dev, 'endpoint', 'enable', '--workspace', ws, ep.id, '--json').json();
    assert.equal(enabled.status, 'unverified', 'switching on re-verifies first');
    const rotated = run(dev, 'endpoint', 'rotate', '--workspace', ws, ep.id, '--grace-hours', '0', '--json').json();
    assert.match(rotated.secret, /^whsec_/);
    assert.notEqual(rotated.secret, ep.secret);
  });

  it('deliveries --json lists attempts with the contract fields; renewals check reports what it emitted', () => {
    const deliveries = run(dev, 'deliveries', '--workspace', ws, '--json');
    assert.equal(deliveries.status, 0, deliveries.stderr);
    assert.deepEqual(deliveries.json(), [], 'no worker ran: nothing attempted yet');
    const renewals = run(dev, 'renewals', 'check', '--workspace', ws, '--json');
    assert.equal(renewals.status, 0, renewals.stderr);
    assert.deepEqual(renewals.json(), { checked: 0, events: [] });
  });

  for (const [label, env, args, pattern] of [
    [
      'http URL outside development',
      {},
      ['--url', 'http://127.0.0.1:9/x', '--scopes', 'assets:read', '--events', 'asset.assigned'],
      /https/,
    ],
    ['private address', {}, ['--url', 'https://10.0.0.8/x', '--scopes', 'assets:read', '--events', 'asset.assigned'], /private/],
    ['write scope', dev, ['--url', 'http://127.0.0.1:9/x', '--scopes', 'kpi:record', '--events', 'asset.assigned'], /write scope/],
    [
      'event outside the scopes',
      dev,
      ['--url', 'http://127.0.0.1:9/x', '--scopes', 'assets:read', '--events', 'vendor.renewal_approaching'],
      /vendors:read/,
    ],
    ['unknown event', dev, ['--url', 'http://127.0.0.1:9/x', '--scopes', 'assets:read', '--events', 'asset.lost'], /unknown event/],
  ] as const) {
    it(`endpoint create refuses with exit 2 and the rule: ${label}`, () => {
      const r = run(env, 'endpoint', 'create', '--workspace', ws, ...args);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, pattern);
      assert.equal(r.stderr.trim().split('\n').length, 1);
    });
  }

  it('deliveries refuses a bad --limit with exit 2', () => {
    const r = run({}, 'deliveries', '--workspace', ws, '--limit', 'all');
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--limit/);
  });

  it('endpoint throttle sets, shows and removes the per-endpoint rate; a bad value is refused with exit 2 and the rule', () => {
    const ep = run(dev, 'endpoint', 'list', '--workspace', ws, '--json').json()[0] as { id: string; max_per_second: number | null };
    assert.equal(ep.max_per_second, null, 'no throttle by default');
    const set = run(dev, 'endpoint', 'throttle', '--workspace', ws, ep.id, '--max-per-second', '20', '--json');
    assert.equal(set.status, 0, set.stderr);
    assert.deepEqual(set.json(), { id: ep.id, max_per_second: 20 });
    assert.equal(run(dev, 'endpoint', 'list', '--workspace', ws, '--json').json()[0].max_per_second, 20);
    for (const bad of ['0', '2.5', 'fast', '10001']) {
      const r = run(dev, 'endpoint', 'throttle', '--workspace', ws, ep.id, '--max-per-second', bad);
      assert.equal(r.status, 2, bad);
      assert.match(r.stderr, /--max-per-second: the throttle must be a whole number of deliveries per second from 1 to 10,000/);
    }
    const cleared = run(dev, 'endpoint', 'throttle', '--workspace', ws, ep.id, '--max-per-second', 'none');
    assert.equal(cleared.status, 0, cleared.stderr);
    assert.match(cleared.stdout, /is not throttled/);
    assert.equal(run(dev, 'endpoint', 'list', '--workspace', ws, '--json').json()[0].max_per_second, null);
    const missing = run(dev, 'endpoint', 'throttle', '--workspace', ws, 'we_nosuch', '--max-per-second', '5');
    assert.notEqual(missing.status, 0);
    assert.match(missing.stderr, /no webhook endpoint we_nosuch/);
  });

  it('endpoint signatures switches the Standard Webhooks headers on and off; anything but on or off is refused with exit 2', () => {
    const ep = run(dev, 'endpoint', 'list', '--workspace', ws, '--json').json()[0] as { id: string; standard_webhooks: boolean };
    assert.equal(ep.standard_webhooks, false, 'off by default');
    const on = run(dev, 'endpoint', 'signatures', '--workspace', ws, ep.id, '--standard-webhooks', 'on');
    assert.equal(on.status, 0, on.stderr);
    assert.match(on.stdout, /X-Service-Signature and the Standard Webhooks headers/);
    assert.equal(run(dev, 'endpoint', 'list', '--workspace', ws, '--json').json()[0].standard_webhooks, true);
    const bad = run(dev, 'endpoint', 'signatures', '--workspace', ws, ep.id, '--standard-webhooks', 'yes');
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--standard-webhooks must be "on" or "off"; got "yes"/);
    const off = run(dev, 'endpoint', 'signatures', '--workspace', ws, ep.id, '--standard-webhooks', 'off', '--json');
    assert.equal(off.status, 0, off.stderr);
    assert.equal(off.json().standard_webhooks, false);
  });
});
