/**
 * Graceful shutdown of a worker process (issue 26, point 5): on SIGTERM it stops claiming,
 * lets the attempts in flight finish and records them, and exits leaving no job under a lease,
 * so another worker takes up the rest at once. Nothing is lost, nothing is sent twice.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { emitEvent } from '../../src/webhooks/events/outbox.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { until } from '../helpers/processes.js';
import { Receiver } from '../helpers/receiver.js';
import { workerProcesses } from '../helpers/worker-processes.js';

const EVENTS = 300;

for (const dialect of DIALECTS) {
  describe(`worker shutdown on SIGTERM [${dialect}]`, () => {
    let h: Harness;
    let rx: Receiver;
    const workers = workerProcesses();
    const startWorker = () => workers.start(h.databaseUrl, { WSOPS_DELIVERY_LEASE_SECONDS: '60' });

    before(async () => {
      h = await createHarness(dialect, { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' });
      rx = await new Receiver().start();
    });
    after(async () => {
      await rx.stop();
      await h.close();
    });

    it('SIGTERM mid-backlog: attempts in flight finish and are recorded, no job stays leased, and a second worker delivers the rest, each event exactly once', async () => {
      const ws = await h.workspace({ seed: false });
      const ep = await createEndpoint(h.services, ws, { url: rx.url('/shutdown'), scopes: 'assets:read', events: 'asset.assigned' });
      const setup = new Dispatcher(h.services);
      while ((await setup.runOnce()) > 0);
      await setup.stop();
      // The first 40 events are answered at once; later ones are held unanswered until after
      // SIGTERM, so the worker has attempts open at the receiver when the signal comes.
      const held: ServerResponse[] = [];
      let holding = true;
      let events = 0;
      rx.on('/shutdown', (req, res) => {
        if (req.headers['x-service-event'] === 'asset.assigned' && ++events > 40 && holding) held.push(res);
        else res.writeHead(200).end('ok');
      });
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
      await until(() => held.length > 0, 30_000, 'the first deliveries and one held open', 20);
      const exited = new Promise<number | null>((r) => first.once('exit', (code) => r(code)));
      first.kill('SIGTERM');
      // The signal is in: the receiver answers what it held and all that follows.
      holding = false;
      for (const res of held) res.writeHead(200).end('ok');
      const code = await exited;
      assert.equal(code, 0, 'the worker exits cleanly');
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
      await until(() => got().length >= EVENTS, 30_000, 'the rest, by the second worker', 20);
      await until(async () => (await jobs()).every((j) => j.state === 'succeeded'), 10_000, 'all jobs recorded', 20);
      // Stopped, the second worker finishes and records what it has in flight: any duplicate has arrived.
      await workers.stopAll('SIGTERM');
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
