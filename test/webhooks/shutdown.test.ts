/**
 * Graceful shutdown of a worker process (issue 26, point 5): on SIGTERM it stops claiming,
 * lets the attempts in flight finish and records them, and exits leaving no job under a lease,
 * so another worker takes up the rest at once. Nothing is lost, nothing is sent twice.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint } from '../../src/webhooks/endpoints.js';
import { emitEvent } from '../../src/webhooks/outbox.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness, TEST_SECRET } from '../helpers/harness.js';
import { Receiver } from '../helpers/receiver.js';

const BIN = new URL('../../bin/wsops', import.meta.url).pathname;
const EVENTS = 300;

async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const dialect of DIALECTS) {
  describe(`worker shutdown on SIGTERM [${dialect}]`, () => {
    let h: Harness;
    let rx: Receiver;
    const children: ChildProcess[] = [];
    const startWorker = () => {
      const child = spawn(process.execPath, [BIN, 'serve', '--only', 'worker'], {
        env: {
          ...process.env,
          WSOPS_DATABASE_URL: h.databaseUrl,
          WSOPS_SECRET: TEST_SECRET,
          WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true',
          WSOPS_DELIVERY_LEASE_SECONDS: '60',
          WSOPS_DEMO: 'false',
          WSOPS_LOG_LEVEL: 'error',
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      children.push(child);
      return child;
    };

    before(async () => {
      h = await createHarness(dialect, { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' });
      rx = await new Receiver().start();
    });
    after(async () => {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      await rx.stop();
      await h.close();
    });

    it('SIGTERM mid-backlog: attempts in flight finish and are recorded, no job stays leased, and a second worker delivers the rest, each event exactly once', async () => {
      const ws = await h.workspace({ seed: false });
      const ep = await createEndpoint(h.services, ws, { url: rx.url('/shutdown'), scopes: 'assets:read', events: 'asset.assigned' });
      const setup = new Dispatcher(h.services);
      while ((await setup.runOnce()) > 0);
      await setup.stop();
      // Answers take 200 ms, so when SIGTERM comes the worker has attempts open at the receiver.
      rx.on('/shutdown', (_req, res) => void setTimeout(() => res.writeHead(200).end('ok'), 200));
      const ids: string[] = [];
      await h.services.database.db.transaction().execute(async (trx) => {
        for (let i = 0; i < EVENTS; i++) {
          const data = {
            asset: { id: `ast_${i}`, asset_tag: `AST-${i}`, status: 'ASSIGNED' },
            assigned_user_id: 'per_x',
            expected_return_at: null,
          };
          ids.push((await emitEvent(trx, ws, 'asset.assigned', data, Date.now())).id);
        }
      });
      const got = () => rx.at('/shutdown').filter((r) => r.headers['x-service-event'] === 'asset.assigned');

      const first = startWorker();
      await until(() => got().length >= 40, 30_000, 'the first deliveries');
      const exited = new Promise<number | null>((r) => first.once('exit', (code) => r(code)));
      const signalled = Date.now();
      first.kill('SIGTERM');
      const code = await exited;
      assert.equal(code, 0, 'the worker exits cleanly');
      assert.ok(Date.now() - signalled < 11_000, 'within the attempt timeout');
      const sentByFirst = got().length;
      assert.ok(sentByFirst < EVENTS, 'the backlog was not finished before the signal');
      const jobs = () => h.services.database.db.selectFrom('delivery_jobs').selectAll().where('event_id', 'in', ids).execute();
      const left = await jobs();
      assert.deepEqual(
        left.filter((j) => j.locked_by !== null),
        [],
        'no job is left under a lease: the rest is free for another worker at once',
      );
      assert.equal(left.filter((j) => j.state === 'succeeded').length, sentByFirst, 'every delivery the receiver got is recorded');

      startWorker();
      await until(() => got().length >= EVENTS, 30_000, 'the rest, by the second worker');
      await until(async () => (await jobs()).every((j) => j.state === 'succeeded'), 10_000, 'all jobs recorded');
      await new Promise((r) => setTimeout(r, 500)); // a duplicate, if one were coming
      const received = got().map((r) => JSON.parse(r.body).id as string);
      assert.equal(received.length, EVENTS, 'nothing sent twice');
      assert.deepEqual(new Set(received), new Set(ids), 'nothing lost');
      const attempts = await h.services.database.db.selectFrom('delivery_attempts').select('id').where('event_id', 'in', ids).execute();
      assert.equal(attempts.length, EVENTS, 'one attempt recorded per event');
      assert.equal(
        (await h.services.database.db.selectFrom('webhook_endpoints').select('status').where('id', '=', ep.id).executeTakeFirstOrThrow())
          .status,
        'active',
      );
    });
  });
}
