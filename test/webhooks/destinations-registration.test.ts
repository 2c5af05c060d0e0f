/**
 * Registering a destination (CONTRACT "Event destinations and filters", ADR 52): the URL's scheme
 * names the kind; each kind's options are checked, templates included; `amqp://` and `nats://`
 * (no TLS) only where private webhooks are allowed; the broker password is sealed and shown
 * nowhere after registration, in the CLI's output either. Refusals write nothing.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { createEndpoint, listEndpoints } from '../../src/webhooks/endpoints/endpoints.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.js';
import { createHarness, type Harness, TEST_SECRET } from '../helpers/harness.js';

const BIN = new URL('../../bin/wsops', import.meta.url).pathname;
const AMQP = 'amqp://guest:s3cret-pass@127.0.0.1:5672/%2F';

for (const dialect of DIALECTS) {
  describe(`destination registration [${dialect}]`, () => {
    let h: Harness;
    before(async () => {
      h = await createHarness(dialect, { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' });
    });
    after(() => h.close());

    const refused = async (
      input: { url: string; exchange?: string; routingKey?: string; subject?: string },
      pattern: RegExp,
      services = h.services,
    ) => {
      const ws = await h.workspace({ seed: false });
      await assert.rejects(createEndpoint(services, ws, { scopes: 'assets:read', events: 'asset.assigned', ...input }), (err: Error) => {
        assert.match(err.message, pattern);
        return true;
      });
      assert.deepEqual(await listEndpoints(h.services, ws), [], 'nothing written');
    };

    it('refuses an unknown scheme, a missing --exchange, a bad template, and options of another kind', async () => {
      await refused({ url: 'ftp://broker.example.com/x' }, /must use https or http \(got ftp:\)/);
      await refused({ url: AMQP }, /a RabbitMQ destination needs --exchange NAME/);
      await refused({ url: AMQP, exchange: 'amq.topic' }, /not a name one may publish to/);
      await refused(
        { url: AMQP, exchange: 'events', routingKey: '{nope}' },
        /--routing-key has an unknown placeholder \{nope\}; the placeholders are \{type\}, \{workspace\}, \{endpoint\}/,
      );
      await refused({ url: AMQP, exchange: 'events', routingKey: 'a b' }, /--routing-key may hold letters/);
      await refused({ url: 'nats://127.0.0.1:4222', subject: 'wsops..{type}' }, /--subject must not have an empty token/);
      await refused({ url: 'nats://127.0.0.1:4222', subject: 'wsops.>' }, /--subject may hold letters/);
      await refused({ url: 'nats://127.0.0.1:4222', exchange: 'events' }, /--exchange and --routing-key are for RabbitMQ destinations/);
      await refused({ url: AMQP, exchange: 'events', subject: 'x' }, /--subject is for NATS destinations/);
      await refused({ url: 'https://hooks.example.com/x', exchange: 'events' }, /exchange is for broker destinations/);
      await refused({ url: 'amqp://guest@127.0.0.1:5672/%2F', exchange: 'events' }, /carries its credentials/);
      await refused({ url: 'nats://user:pw@127.0.0.1:4222' }, /without a user or password/);
    });

    it('refuses amqp:// and nats:// (no TLS) and private addresses unless private webhooks are allowed', async () => {
      const strict = { ...h.services, config: { ...h.services.config, allowPrivateWebhooks: false } };
      await refused(
        { url: AMQP, exchange: 'events' },
        /amqp:\/\/ sends without TLS .*\[rule: scheme\]|amqp:\/\/ sends without TLS/,
        strict,
      );
      await refused({ url: 'nats://127.0.0.1:4222' }, /nats:\/\/ sends without TLS/, strict);
      await refused(
        { url: 'amqps://guest:pw@127.0.0.1:5671/%2F', exchange: 'events' },
        /is a loopback address.*\[rule: private_address\]; to deliver to a receiver on this machine/,
        strict,
      );
      await refused({ url: 'tls://10.1.2.3:4222' }, /is a private address/, strict);
      await refused({ url: 'tls://localhost:4222' }, /is a local name/, strict);
    });

    it('keeps the displayed URL without the password, the password sealed, the defaults filled in', async () => {
      const ws = await h.workspace({ seed: false });
      const ep = await createEndpoint(h.services, ws, { url: AMQP, scopes: 'assets:read', events: 'asset.assigned', exchange: 'events' });
      assert.equal(ep.url, 'amqp://guest@127.0.0.1:5672/%2F');
      assert.deepEqual([ep.kind, ep.exchange, ep.routing_key, ep.subject], ['rabbitmq', 'events', '{type}', null]);
      const nats = await createEndpoint(h.services, ws, { url: 'nats://127.0.0.1', scopes: 'assets:read', events: 'asset.assigned' });
      assert.equal(nats.url, 'nats://127.0.0.1:4222');
      assert.deepEqual([nats.kind, nats.exchange, nats.routing_key, nats.subject], ['nats', null, null, 'wsops.{workspace}.{type}']);
      const everything = JSON.stringify([
        await h.services.database.db.selectFrom('webhook_endpoints').selectAll().execute(),
        await h.services.database.db.selectFrom('audit_events').selectAll().where('workspace_id', '=', ws).execute(),
        await listEndpoints(h.services, ws),
      ]);
      assert.ok(!everything.includes('s3cret-pass'), 'the password is in no row, audit entry or view');
    });
  });
}

describe('wsops endpoint create with a destination [sqlite]', () => {
  let db: TestDatabase;
  let ws: string;
  const run = (...args: string[]) => {
    const r = spawnSync(process.execPath, [BIN, ...args], {
      env: {
        ...process.env,
        WSOPS_DATABASE_URL: db.url,
        WSOPS_SECRET: TEST_SECRET,
        WSOPS_LOG_LEVEL: 'debug',
        WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true',
      },
      encoding: 'utf8',
    });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) };
  };
  before(async () => {
    db = await createTestDatabase('sqlite');
    ws = run('workspace', 'create', '--name', 'Brokers', '--json').json().id;
  });
  after(() => db.drop());

  it('registers with --exchange and --routing-key, prints no password, and refuses a missing --exchange with exit 2', () => {
    const base = ['endpoint', 'create', '--workspace', ws, '--scopes', 'assets:read', '--events', 'asset.assigned'];
    const created = run(...base, '--url', AMQP, '--exchange', 'events', '--routing-key', 'wsops.{type}', '--json');
    assert.equal(created.status, 0, created.stderr);
    const ep = created.json();
    assert.equal(ep.url, 'amqp://guest@127.0.0.1:5672/%2F');
    assert.equal(ep.routing_key, 'wsops.{type}');
    assert.ok(!`${created.stdout}${created.stderr}`.includes('s3cret-pass'));
    const text = run(...base, '--url', 'nats://127.0.0.1:4222', '--subject', 'events.{workspace}.{type}');
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, /NATS JetStream destination nats:\/\/127\.0\.0\.1:4222: subject events\.\{workspace\}\.\{type\}/);
    const listed = run('endpoint', 'list', '--workspace', ws, '--json');
    assert.ok(!`${listed.stdout}${listed.stderr}`.includes('s3cret-pass'));
    const missing = run(...base, '--url', AMQP);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /needs --exchange NAME/);
    assert.ok(!missing.stderr.includes('s3cret-pass'));
    const wrongKind = run(...base, '--url', 'nats://127.0.0.1:4222', '--exchange', 'events');
    assert.equal(wrongKind.status, 2);
  });
});
