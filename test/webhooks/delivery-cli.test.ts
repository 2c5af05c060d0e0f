/**
 * `wsops deliveries resend|recover` and `wsops endpoint test` as real processes against both
 * dialects, with a real receiver on 127.0.0.1 and a dispatcher draining the queue in this
 * process. The bare `wsops deliveries` keeps the contract's attempt shape.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { verifySignature } from '@wsops/client';
import { loadConfig } from '../../src/config.js';
import { createServices, type Services } from '../../src/services.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.js';
import { TEST_SECRET } from '../helpers/harness.js';
import { Receiver } from '../helpers/receiver.js';

const BIN = new URL('../../bin/wsops', import.meta.url).pathname;
const ENV = { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true', WSOPS_SECRET: TEST_SECRET, WSOPS_LOG_LEVEL: 'silent' };

for (const dialect of DIALECTS) {
  describe(`wsops deliveries resend|recover and endpoint test [${dialect}]`, () => {
    let db: TestDatabase;
    let rx: Receiver;
    let services: Services;
    let dispatcher: Dispatcher;
    let ws: string;
    let otherWs: string;
    let endpoint: { id: string; secret: string };
    const run = (...args: string[]) => {
      const r = spawnSync(process.execPath, [BIN, ...args], {
        env: { ...process.env, ...ENV, WSOPS_DATABASE_URL: db.url },
        encoding: 'utf8',
      });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) };
    };
    const drain = async () => {
      let total = 0;
      for (let n = await dispatcher.runOnce(); n > 0; n = await dispatcher.runOnce()) total += n;
      return total;
    };

    before(async () => {
      db = await createTestDatabase(dialect);
      rx = await new Receiver().start();
      ws = run('workspace', 'create', '--name', 'Hooks', '--json').json().id;
      otherWs = run('workspace', 'create', '--name', 'Other', '--json').json().id;
      const created = run(
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
      endpoint = created.json();
      services = await createServices(loadConfig({ ...ENV, WSOPS_DATABASE_URL: db.url }));
      dispatcher = new Dispatcher(services, { random: () => 0 });
      await drain(); // the verification: the endpoint becomes active
    });
    after(async () => {
      await dispatcher.stop();
      await services.close();
      await rx.stop();
      await db.drop();
    });

    it('endpoint test queues a signed endpoint.test for that endpoint; deliveries --json lists its attempt with the contract fields', async () => {
      const sent = run('endpoint', 'test', '--workspace', ws, endpoint.id, '--json');
      assert.equal(sent.status, 0, sent.stderr);
      const { event_id } = sent.json();
      assert.match(event_id, /^evt_/);
      assert.equal(await drain(), 1);
      const got = rx.at('/cli').find((r) => r.headers['x-service-event'] === 'endpoint.test');
      assert.ok(got);
      verifySignature(got.body, got.headers['x-service-signature'] as string, endpoint.secret);
      const listed = run('deliveries', '--workspace', ws, '--endpoint', endpoint.id, '--json');
      assert.equal(listed.status, 0, listed.stderr);
      const attempt = listed.json().find((a: { event_id: string }) => a.event_id === event_id);
      for (const field of [
        'delivery_id',
        'event_id',
        'endpoint_id',
        'attempt',
        'status_code',
        'outcome',
        'attempted_at',
        'next_attempt_at',
      ]) {
        assert.ok(Object.hasOwn(attempt, field), field);
      }
      assert.equal(attempt.outcome, 'succeeded');
    });

    it('deliveries resend makes a new attempt with a new delivery id and the same event id', async () => {
      const [latest] = run('deliveries', '--workspace', ws, '--endpoint', endpoint.id, '--limit', '1', '--json').json();
      const resent = run('deliveries', 'resend', '--workspace', ws, '--endpoint', endpoint.id, latest.delivery_id, '--json');
      assert.equal(resent.status, 0, resent.stderr);
      assert.equal(resent.json().event_id, latest.event_id);
      assert.equal(await drain(), 1);
      const [again] = run('deliveries', '--workspace', ws, '--endpoint', endpoint.id, '--limit', '1', '--json').json();
      assert.equal(again.event_id, latest.event_id);
      assert.notEqual(again.delivery_id, latest.delivery_id);
      assert.equal(again.attempt, latest.attempt + 1);
      const human = run('deliveries', 'resend', latest.delivery_id, '--workspace', ws, '--endpoint', endpoint.id);
      assert.equal(human.status, 0, human.stderr);
      assert.match(human.stdout, /due again now/);
    });

    it('deliveries recover reports how many failed deliveries are due again; a bad --since is refused with exit 2', () => {
      const recovered = run(
        'deliveries',
        'recover',
        '--workspace',
        ws,
        '--endpoint',
        endpoint.id,
        '--since',
        '2020-01-01T00:00:00Z',
        '--json',
      );
      assert.equal(recovered.status, 0, recovered.stderr);
      assert.deepEqual(recovered.json(), { recovered: 0, since: '2020-01-01T00:00:00.000Z' });
      const bad = run('deliveries', 'recover', '--workspace', ws, '--endpoint', endpoint.id, '--since', 'last tuesday');
      assert.equal(bad.status, 2);
      assert.match(bad.stderr, /since/);
    });

    it("refuses with exit 2 and one line: a missing --endpoint, another workspace's endpoint, an unknown delivery", () => {
      for (const [args, pattern] of [
        [['deliveries', 'resend', '--workspace', ws, 'dlv_x'], /--endpoint/],
        [['deliveries', 'recover', '--endpoint', endpoint.id, '--since', '2020-01-01T00:00:00Z'], /--workspace/],
        [['deliveries', 'resend', '--workspace', otherWs, '--endpoint', endpoint.id, 'dlv_x'], /no webhook endpoint/],
        [['endpoint', 'test', '--workspace', otherWs, endpoint.id], /no webhook endpoint/],
        [['deliveries', 'resend', '--workspace', ws, '--endpoint', endpoint.id, 'dlv_missing'], /no delivery dlv_missing/],
        [['deliveries'], /--workspace/],
      ] as const) {
        const r = run(...args);
        assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, pattern);
        assert.equal(r.stderr.trim().split('\n').length, 1);
      }
    });
  });
}
