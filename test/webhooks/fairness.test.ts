/**
 * Fairness across workspaces and endpoints (issue 26): one workspace's backlog at a slow or
 * hanging receiver never delays another workspace's event, and one endpoint never has more
 * requests open than its cap, however many workers share the database.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { before, describe, it } from 'node:test';
import { DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT } from '../../src/webhooks/dispatcher.js';
import { disableEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { emitEvent } from '../../src/webhooks/events/outbox.js';
import { DIALECTS } from '../helpers/databases.js';
import { ASSIGNED, dispatcherRig } from '../helpers/dispatcher-rig.js';
import type { Harness } from '../helpers/harness.js';
import { until } from '../helpers/processes.js';
import { answer, type Receiver } from '../helpers/receiver.js';
import { workerProcesses } from '../helpers/worker-processes.js';

const BACKLOG = 2000;

for (const dialect of DIALECTS) {
  describe(`fair delivery across workspaces [${dialect}]`, () => {
    const workers = workerProcesses();
    const rig = dispatcherRig(dialect, 'fair', { pollMs: 1, maxIdleMs: 20 });
    const { dispatcher, activeEndpoint, emitMany, eventsAt } = rig;
    let h: Harness;
    let rx: Receiver;
    before(() => {
      ({ h, rx } = rig);
    });

    const db = () => h.services.database.db;
    const pendingOf = async (endpointId: string) =>
      (await db().selectFrom('delivery_jobs').select('id').where('endpoint_id', '=', endpointId).where('state', '=', 'pending').execute())
        .length;

    /**
     * A receiver that holds every request open (as one hanging until the attempt timeout) and
     * counts those still open: a request whose sender gave up (the 10 s attempt timeout, which a
     * loaded machine can reach before the test looks) closes and no longer counts, so `held` is
     * what the worker has in flight at this endpoint now.
     */
    const hanging = (p: string) => {
      const held: ServerResponse[] = [];
      let most = 0;
      let received = 0;
      rx.on(p, (_req, res) => {
        received++;
        held.push(res);
        res.once('close', () => {
          const i = held.indexOf(res);
          if (i >= 0) held.splice(i, 1);
        });
        most = Math.max(most, held.length);
      });
      return {
        held,
        most: () => most,
        received: () => received,
        release: () => {
          for (const res of [...held]) if (!res.writableEnded) res.writeHead(200).end('ok');
        },
      };
    };

    /**
     * B's receiver answers at once and notes what A's receiver had when B's event arrived: how
     * many requests it held open and how many it had received. Both equal to the cap means B went
     * out while A's first requests still hung (none had timed out and been sent again): B did not
     * wait on A. No clock is read: only a machine so slow that B took longer than the 10 s
     * attempt timeout fails it.
     */
    const onB = (p: string, hang: { held: readonly unknown[]; received: () => number }) => {
      const heldAtB: number[][] = [];
      rx.on(p, (req, res, body) => {
        heldAtB.push([hang.held.length, hang.received()]);
        answer(200)(req, res, body);
      });
      return heldAtB;
    };

    it("B's single event is delivered at once while A's thousands of deliveries hang at A's receiver", async () => {
      const a = await activeEndpoint();
      const b = await activeEndpoint();
      const hang = hanging(a.path);
      const heldAtB = onB(b.path, hang);
      await emitMany(a.ws, BACKLOG);
      h.clock.advance(1);
      const d = dispatcher();
      d.start();
      await until(() => hang.held.length >= DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT, 10_000, "A's receiver to be saturated", 5);
      await emitMany(b.ws, 1);
      d.wake();
      await until(() => eventsAt(b.path).length === 1, 30_000, "B's event", 5);
      assert.deepEqual(
        heldAtB,
        [[DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT, DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT]],
        "B was delivered while A's receiver held its whole cap: B never waits on A",
      );
      assert.equal(hang.held.length, DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT, 'A has only its cap of requests open, no more');
      assert.ok((await pendingOf(a.id)) >= BACKLOG - DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT, "A's backlog is still waiting");
      hang.release();
      await d.stop();
      await disableEndpoint(h.services, a.ws, a.id);
      await disableEndpoint(h.services, b.ws, b.id);
    });

    it("B's event committed while A's backlog flows to a slow receiver (100-300 ms answers) is delivered at once, not after A's backlog", async () => {
      const a = await activeEndpoint();
      const b = await activeEndpoint();
      let open = 0;
      let most = 0;
      rx.on(a.path, (_req, res) => {
        open++;
        most = Math.max(most, open);
        setTimeout(
          () => {
            open--;
            res.writeHead(200).end('ok');
          },
          100 + Math.random() * 200,
        );
      });
      let aBeforeB = -1;
      rx.on(b.path, (req, res, body) => {
        aBeforeB = eventsAt(a.path).length;
        answer(200)(req, res, body);
      });
      await emitMany(a.ws, BACKLOG);
      h.clock.advance(1);
      const d = dispatcher();
      d.start();
      // Let A's slow answers finish at scattered moments for a while (the claims then always
      // find A with some room: before the fix this kept every claim loop waiting on A).
      await until(() => eventsAt(a.path).length >= 48, 10_000, "A's first rounds", 5);
      await emitMany(b.ws, 1);
      d.wake();
      await until(() => aBeforeB >= 0, 30_000, "B's event", 5);
      await d.stop();
      // A's answers take 100-300 ms, 16 at a time: had B queued behind A's backlog, A would have had all of it.
      assert.ok(aBeforeB < BACKLOG / 4, `B was delivered before A's backlog (A had ${aBeforeB} of ${BACKLOG})`);
      assert.ok(most <= DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT, `at most the cap open at A (saw ${most})`);
      assert.ok((await pendingOf(a.id)) > BACKLOG / 2, "A's backlog is still mostly undelivered");
      await disableEndpoint(h.services, a.ws, a.id);
      await disableEndpoint(h.services, b.ws, b.id);
    });

    it('two workers on one database: the cap on requests open at one endpoint holds across both, and B is delivered while A hangs', async () => {
      const a = await activeEndpoint();
      const b = await activeEndpoint();
      const hang = hanging(a.path);
      const heldAtB = onB(b.path, hang);
      await emitMany(a.ws, BACKLOG);
      h.clock.advance(1);
      const workers = [dispatcher(), dispatcher()];
      for (const w of workers) w.start();
      await until(() => hang.held.length >= DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT, 10_000, "A's receiver to be saturated", 5);
      // Both workers keep claiming while A is saturated: B's delivery is one of those claims.
      await emitMany(b.ws, 1);
      for (const w of workers) w.wake();
      await until(() => eventsAt(b.path).length === 1, 30_000, "B's event", 5);
      assert.deepEqual(
        heldAtB,
        [[DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT, DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT]],
        "B was delivered while A's receiver held its whole cap, no more",
      );
      assert.equal(hang.most(), DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT, 'both workers together kept to the cap');
      // A's receiver answers again (every 20 ms): the backlog flows, still at most the cap at once across both workers.
      const answering = setInterval(hang.release, 20);
      await until(() => hang.received() >= 200, 30_000, 'more of A', 5);
      for (const w of workers) await w.stop();
      clearInterval(answering);
      hang.release();
      assert.ok(hang.most() <= DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT, `at most the cap open at A (saw ${hang.most()})`);
      await disableEndpoint(h.services, a.ws, a.id);
      await disableEndpoint(h.services, b.ws, b.id);
    });

    it('two worker processes: together they keep to the cap at a hanging receiver, and B is delivered at once', async () => {
      const a = await activeEndpoint();
      const b = await activeEndpoint();
      const hang = hanging(a.path);
      const heldAtB = onB(b.path, hang);
      await emitMany(a.ws, BACKLOG);
      const children = [workers.start(h.databaseUrl), workers.start(h.databaseUrl)];
      try {
        await until(() => hang.held.length >= DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT, 30_000, "A's receiver to be saturated", 5);
        // Both processes keep claiming while A is saturated: B's delivery is one of those claims.
        await db()
          .transaction()
          .execute((trx) => emitEvent(trx, b.ws, 'asset.assigned', ASSIGNED, Date.now()));
        await until(() => eventsAt(b.path).length === 1, 30_000, "B's event", 5);
        assert.deepEqual(
          heldAtB,
          [[DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT, DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT]],
          "B was delivered while A's receiver held its whole cap, no more",
        );
        assert.equal(hang.most(), DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT, 'both processes together kept to the cap');
      } finally {
        for (const c of children) await workers.stop(c, 'SIGKILL');
        hang.release();
      }
      await disableEndpoint(h.services, a.ws, a.id);
      await disableEndpoint(h.services, b.ws, b.id);
    });
  });
}
