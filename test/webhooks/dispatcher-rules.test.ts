/**
 * The dispatcher's isolation rules: one endpoint's fault never delays another's deliveries, a
 * worker whose lease expired cannot overwrite a newer result, a burst opens at most DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT (64)
 * requests at one receiver, test events never touch an endpoint's failure count, and a
 * delivery can be made due again (the console's resend).
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { before, describe, it } from 'node:test';
import { pino } from 'pino';
import type { DeliveryObserver } from '../../src/webhooks/delivery-observer.js';
import { DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT, Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint, disableEndpoint, enableEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { TEST_EVENT } from '../../src/webhooks/events/event-types.js';
import { emitTestEvent } from '../../src/webhooks/events/outbox.js';
import { claimDueJobs, makeDueNow } from '../../src/webhooks/queue/queue.js';
import { DIALECTS } from '../helpers/databases.js';
import { dispatcherRig } from '../helpers/dispatcher-rig.js';
import type { Harness } from '../helpers/harness.js';
import { until } from '../helpers/processes.js';
import { answer, type Receiver } from '../helpers/receiver.js';

for (const dialect of DIALECTS) {
  describe(`dispatcher isolation rules [${dialect}]`, () => {
    const rig = dispatcherRig(dialect, 'rules');
    const { dispatcher, drain, activeEndpoint, emit } = rig;
    let h: Harness;
    let rx: Receiver;
    before(() => {
      ({ h, rx } = rig);
    });

    const db = () => h.services.database.db;
    const endpoint = (id: string) => db().selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const attemptsOf = (endpointId: string, type = 'asset.assigned') =>
      db()
        .selectFrom('delivery_attempts')
        .selectAll()
        .where('endpoint_id', '=', endpointId)
        .where('event_type', '=', type)
        .orderBy('attempt')
        .execute();
    /** Queues an endpoint.test event for one endpoint, as the console does. */
    const queueTestEvent = async (ws: string, endpointId: string) =>
      (
        await db()
          .transaction()
          .execute((trx) => emitTestEvent(trx, ws, endpointId, h.clock()))
      ).id;

    it('the cap on requests open at one endpoint counts the jobs of a worker that claimed after this one read the time (it waited for its turn)', async () => {
      const ep = await activeEndpoint();
      for (let i = 0; i < 4; i++) await emit(ep.ws);
      const { deliveries, engine } = h.services.database;
      const claim = (now: number) => claimDueJobs(deliveries, engine, { now, leaseMs: 30_000, limit: 10, perEndpoint: 2 });
      const ofEndpoint = (c: Awaited<ReturnType<typeof claim>>) => c.jobs.filter((j) => j.endpoint_id === ep.id).length;
      const readAt = h.clock();
      try {
        assert.equal(ofEndpoint(await claim(readAt + 1000)), 2, 'the other worker takes the cap');
        assert.equal(ofEndpoint(await claim(readAt)), 0, 'two requests are open at the endpoint already');
      } finally {
        await db().deleteFrom('delivery_jobs').where('endpoint_id', '=', ep.id).execute();
      }
    });

    it('an endpoint whose secret cannot be decrypted gets failed attempts (secret_unavailable); another workspace is delivered in the same round', async () => {
      const broken = await activeEndpoint();
      const healthy = await activeEndpoint();
      await db().updateTable('webhook_endpoints').set({ secret_ciphertext: 'v1.AAAA.BBBB.CCCC' }).where('id', '=', broken.id).execute();
      await emit(broken.ws);
      await emit(broken.ws);
      const event = await emit(healthy.ws);
      const handled = await dispatcher().runOnce();
      assert.equal(handled, 3, 'one round claimed all three jobs');
      assert.equal(rx.at(healthy.path).filter((r) => JSON.parse(r.body).id === event.id).length, 1, 'the other workspace got its event');
      assert.equal(rx.at(broken.path).filter((r) => r.headers['x-service-event'] === 'asset.assigned').length, 0);
      const failed = await attemptsOf(broken.id);
      assert.equal(failed.length, 2);
      for (const a of failed) {
        assert.equal(a.outcome, 'failed');
        assert.equal(a.error_class, 'secret_unavailable');
        assert.equal(a.next_attempt_at, new Date(Date.parse(a.attempted_at) + 60_000).toISOString(), 'retried on the schedule');
      }
      const row = await endpoint(broken.id);
      assert.equal(row.consecutive_failures, 2);
      assert.match(row.last_failure ?? '', /signing secret cannot be decrypted/);
      assert.ok(!(row.last_failure ?? '').includes('v1.AAAA'), 'the ciphertext is not echoed');
      await disableEndpoint(h.services, broken.ws, broken.id);
      await disableEndpoint(h.services, healthy.ws, healthy.id);
    });

    it('a worker whose lease expired cannot overwrite the result of the newer attempt of the same job', async () => {
      const ep = await activeEndpoint();
      let held: ServerResponse | undefined;
      rx.on(ep.path, (_req, res) => {
        if (!held)
          held = res; // the first worker's attempt hangs
        else res.writeHead(200).end('ok');
      });
      await emit(ep.ws);
      const slow = dispatcher({ leaseMs: 11_000 });
      const fast = dispatcher({ leaseMs: 11_000 });
      const slowRound = slow.runOnce();
      await until(() => held !== undefined, 10_000, 'the first attempt', 10);
      h.clock.advance(11_001); // the first worker's lease is over
      assert.equal(await fast.runOnce(), 1, 'the second worker claims the job again');
      held?.writeHead(500).end('late failure');
      assert.equal(await slowRound, 1);
      const job = await db().selectFrom('delivery_jobs').selectAll().where('endpoint_id', '=', ep.id).executeTakeFirstOrThrow();
      assert.equal(job.state, 'succeeded', 'the newer success stands');
      assert.equal(job.attempts, 1);
      const attempts = await attemptsOf(ep.id);
      assert.equal(attempts.length, 1, 'the stale result is not recorded');
      assert.equal(attempts[0]?.outcome, 'succeeded');
      assert.equal((await endpoint(ep.id)).consecutive_failures, 0, 'the stale failure is not counted');
      await disableEndpoint(h.services, ep.ws, ep.id);
    });

    it('a burst of 200 deliveries opens at most 64 requests at once at one receiver (the per-endpoint cap), and another endpoint is not kept waiting behind it', async () => {
      const busy = await activeEndpoint();
      const other = await activeEndpoint();
      let open = 0;
      let most = 0;
      let otherArrivedAfter = -1;
      rx.on(busy.path, (_req, res) => {
        open++;
        most = Math.max(most, open);
        setTimeout(() => {
          open--;
          res.writeHead(200).end('ok');
        }, 20);
      });
      rx.on(other.path, (req, res, body) => {
        otherArrivedAfter = rx.at(busy.path).length;
        answer(200)(req, res, body);
      });
      await rig.emitMany(busy.ws, 200);
      await emit(other.ws);
      const d = dispatcher({ pollMs: 1, maxIdleMs: 5 });
      d.start();
      await until(async () => (await attemptsOf(busy.id)).length === 200 && otherArrivedAfter >= 0, 60_000, 'all deliveries', 10);
      await d.stop();
      assert.ok(
        most <= DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT,
        `at most ${DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT} requests open at once (saw ${most})`,
      );
      assert.ok(most >= 8, `requests to one endpoint still run concurrently (saw ${most})`);
      assert.ok(otherArrivedAfter < 100, `the other endpoint was served while the burst was running (after ${otherArrivedAfter} of 200)`);
      await disableEndpoint(h.services, busy.ws, busy.id);
      await disableEndpoint(h.services, other.ws, other.id);
    });

    it('endpoint.test events are delivered signed but neither count toward auto-disable nor reset the count; unverified endpoints get them, disabled ones never', async () => {
      const ep = await activeEndpoint();
      await db().updateTable('webhook_endpoints').set({ consecutive_failures: 19 }).where('id', '=', ep.id).execute();
      rx.on(ep.path, answer(500));
      await queueTestEvent(ep.ws, ep.id);
      await drain(dispatcher());
      const afterFailure = await endpoint(ep.id);
      assert.equal(afterFailure.status, 'active', 'a failed test is not the twentieth failure');
      assert.equal(afterFailure.consecutive_failures, 19);
      rx.on(ep.path, answer(200));
      h.clock.advance(60_000);
      await drain(dispatcher());
      const tests = await attemptsOf(ep.id, TEST_EVENT);
      assert.deepEqual(
        tests.map((a) => a.outcome),
        ['failed', 'succeeded'],
      );
      assert.equal((await endpoint(ep.id)).consecutive_failures, 19, 'a successful test does not reset the count');
      const received = rx.at(ep.path).filter((r) => r.headers['x-service-event'] === TEST_EVENT);
      assert.match(String(received[0]?.headers['x-service-signature']), /^t=\d+,v1=[0-9a-f]{64}$/);

      const ws = await h.workspace({ seed: false });
      rx.on('/rules-unverified', answer(500));
      const unverified = await createEndpoint(h.services, ws, {
        url: rx.url('/rules-unverified'),
        scopes: 'assets:read',
        events: 'asset.assigned',
      });
      await drain(dispatcher());
      rx.on('/rules-unverified', answer(200));
      await queueTestEvent(ws, unverified.id);
      await drain(dispatcher());
      assert.equal((await attemptsOf(unverified.id, TEST_EVENT)).length, 1, 'an unverified endpoint receives a test event');
      assert.equal((await endpoint(unverified.id)).status, 'unverified', 'a test event does not verify');
      await disableEndpoint(h.services, ep.ws, ep.id);
      await queueTestEvent(ep.ws, ep.id);
      await drain(dispatcher());
      assert.equal((await attemptsOf(ep.id, TEST_EVENT)).length, 2, 'a disabled endpoint receives no test event');
      await disableEndpoint(h.services, ws, unverified.id);
    });

    it('an auto-disable is logged once at warn, and the held and released deliveries once each at info, with the endpoint', async (t) => {
      const ep = await activeEndpoint();
      const lines: { level: number; msg: string; component?: string; endpoint_id?: string; held?: number; released?: number }[] = [];
      const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
      const d = new Dispatcher({ ...h.services, logger }, { random: () => 0 });
      t.after(() => d.stop());
      rx.on(ep.path, answer(500));
      for (let i = 0; i < 25; i++) await emit(ep.ws);
      await drain(d);
      assert.equal((await endpoint(ep.id)).status, 'disabled');
      const disabled = lines.filter((l) => l.msg === 'endpoint disabled after failures in a row');
      assert.equal(disabled.length, 1);
      assert.equal(disabled[0]?.level, 40, 'warn');
      assert.equal(disabled[0]?.endpoint_id, ep.id);
      assert.equal(disabled[0]?.component, 'dispatcher');
      const held = lines.filter((l) => l.msg === 'deliveries held for a disabled endpoint');
      assert.deepEqual(
        held.map((l) => [l.level, l.held]),
        [[30, 25]],
        'one info line: the 25 owed deliveries are held',
      );
      rx.on(ep.path, answer(200));
      await enableEndpoint(h.services, ep.ws, ep.id);
      await drain(d);
      const released = lines.filter((l) => l.msg === 'held deliveries released');
      assert.deepEqual(
        released.map((l) => [l.level, l.endpoint_id, l.released]),
        [[30, ep.id, 25]],
      );
      await disableEndpoint(h.services, ep.ws, ep.id);
    });

    it('a finished delivery made due again is attempted once more: a new delivery id, the same event id, the next attempt number', async () => {
      const ep = await activeEndpoint();
      const seen: Parameters<DeliveryObserver['attempted']>[] = [];
      const observer: DeliveryObserver = { attempted: (...args) => void seen.push(args) };
      const event = await emit(ep.ws);
      h.clock.advance(250);
      await drain(dispatcher({ observer }));
      const job = await db().selectFrom('delivery_jobs').selectAll().where('event_id', '=', event.id).executeTakeFirstOrThrow();
      assert.equal(job.state, 'succeeded');
      const made = await db()
        .transaction()
        .execute((trx) => makeDueNow(trx, [job.id], h.clock()));
      assert.deepEqual(made, [job.id]);
      await drain(dispatcher({ observer }));
      const got = rx.at(ep.path).filter((r) => JSON.parse(r.body).id === event.id);
      assert.equal(got.length, 2);
      assert.notEqual(got[0]?.headers['x-service-delivery'], got[1]?.headers['x-service-delivery']);
      assert.deepEqual(
        (await attemptsOf(ep.id)).map((a) => [a.attempt, a.outcome]),
        [
          [1, 'succeeded'],
          [2, 'succeeded'],
        ],
      );
      assert.deepEqual(seen, [
        ['succeeded', null, 250],
        ['succeeded', null, null],
      ]);
      await disableEndpoint(h.services, ep.ws, ep.id);
    });
  });
}
