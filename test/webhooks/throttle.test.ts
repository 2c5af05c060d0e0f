/**
 * The per-endpoint throttle (issue 26, ADR 33): at most N deliveries a second to one endpoint,
 * spaced evenly, whichever worker claims; throttled deliveries wait in the queue, are never
 * dropped, record no attempt and count as no failure. Time is the injected clock.
 */
import assert from 'node:assert/strict';
import { before, beforeEach, describe, it } from 'node:test';
import { disableEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { parseThrottle, setThrottle } from '../../src/webhooks/queue/throttle.js';
import { DIALECTS } from '../helpers/databases.js';
import { dispatcherRig } from '../helpers/dispatcher-rig.js';
import type { Harness } from '../helpers/harness.js';
import { answer, type Receiver } from '../helpers/receiver.js';

for (const dialect of DIALECTS) {
  describe(`per-endpoint throttle [${dialect}]`, () => {
    const rig = dispatcherRig(dialect, 'throttle');
    const { dispatcher, activeEndpoint, emitMany } = rig;
    let h: Harness;
    let rx: Receiver;
    before(() => {
      ({ h, rx } = rig);
    });
    beforeEach(async () => {
      const open = await h.services.database.db
        .selectFrom('webhook_endpoints')
        .select(['id', 'workspace_id'])
        .where('status', '!=', 'disabled')
        .execute();
      for (const e of open) await disableEndpoint(h.services, e.workspace_id, e.id);
    });

    const db = () => h.services.database.db;
    const eventsAt = (p: string) => rig.eventsAt(p).length;
    const jobsOf = (endpointId: string) =>
      db()
        .selectFrom('delivery_jobs')
        .select(['state', 'attempts'])
        .where('endpoint_id', '=', endpointId)
        .where('event_type', '=', 'asset.assigned')
        .execute();

    it('a throttle of 2 per second sends one delivery each half second, whichever of two workers claims', async () => {
      const ep = await activeEndpoint();
      await setThrottle(h.services, ep.ws, ep.id, 2);
      await emitMany(ep.ws, 6);
      const [a, b] = [dispatcher(), dispatcher()];
      const sentAt: number[] = [];
      const start = h.clock();
      // 3 s of claims every 100 ms, alternating between two workers that share the database.
      for (let t = 0; t <= 3000; t += 100) {
        const before = eventsAt(ep.path);
        await (t % 200 === 0 ? a : b).runOnce();
        await (t % 200 === 0 ? b : a).runOnce();
        for (let i = before; i < eventsAt(ep.path); i++) sentAt.push(h.clock() - start);
        h.clock.advance(100);
      }
      assert.deepEqual(sentAt, [0, 500, 1000, 1500, 2000, 2500], 'one every 500 ms, never two at once');
    });

    it('throttled deliveries wait in the queue: never dropped, no attempt recorded, no failure counted', async () => {
      const ep = await activeEndpoint();
      rx.on(ep.path, answer(200));
      await setThrottle(h.services, ep.ws, ep.id, 1);
      await emitMany(ep.ws, 30);
      const d = dispatcher();
      for (let i = 0; i < 5; i++) await d.runOnce();
      assert.equal(eventsAt(ep.path), 1, 'one this second');
      const jobs = await jobsOf(ep.id);
      assert.equal(jobs.filter((j) => j.state === 'pending' && j.attempts === 0).length, 29, 'the rest wait, untouched');
      const attempts = await db()
        .selectFrom('delivery_attempts')
        .select('id')
        .where('endpoint_id', '=', ep.id)
        .where('event_type', '=', 'asset.assigned')
        .execute();
      assert.equal(attempts.length, 1, 'no attempt is recorded for a throttled delivery');
      const row = await db()
        .selectFrom('webhook_endpoints')
        .select(['status', 'consecutive_failures'])
        .where('id', '=', ep.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(row, { status: 'active', consecutive_failures: 0 }, 'waiting is no failure');
      // Every one is delivered in time, none lost.
      for (let s = 0; s < 40 && eventsAt(ep.path) < 30; s++) {
        h.clock.advance(1000);
        await d.runOnce();
      }
      assert.equal(eventsAt(ep.path), 30);
      assert.ok((await jobsOf(ep.id)).every((j) => j.state === 'succeeded' && j.attempts === 1));
    });

    it('a high throttle sends a tenth of a second worth at once; removing it sends the rest at once', async () => {
      const ep = await activeEndpoint();
      await setThrottle(h.services, ep.ws, ep.id, 100);
      await emitMany(ep.ws, 40);
      const d = dispatcher();
      await d.runOnce();
      await d.runOnce();
      assert.equal(eventsAt(ep.path), 10, '100/s: 10 per 100 ms');
      h.clock.advance(100);
      await d.runOnce();
      assert.equal(eventsAt(ep.path), 20);
      await setThrottle(h.services, ep.ws, ep.id, null);
      while ((await d.runOnce()) > 0);
      assert.equal(eventsAt(ep.path), 40);
    });

    it('the throttle is validated: a whole number from 1 to 10,000, or empty / none for no throttle', async () => {
      assert.equal(parseThrottle(''), null);
      assert.equal(parseThrottle(' none '), null);
      assert.equal(parseThrottle('25'), 25);
      for (const bad of ['0', '-3', '2.5', 'ten', '10001', '1e3']) {
        assert.throws(
          () => parseThrottle(bad),
          (err: Error & { code?: string }) =>
            err.code === 'invalid_parameter' && /whole number of deliveries per second from 1 to 10,000/.test(err.message),
          bad,
        );
      }
      const ep = await activeEndpoint();
      const other = await h.workspace({ seed: false });
      await assert.rejects(setThrottle(h.services, other, ep.id, 5), (err: Error & { code?: string }) => err.code === 'not_found');
      const audit = await db()
        .selectFrom('audit_events')
        .select(['action', 'detail'])
        .where('target', '=', ep.id)
        .where('action', '=', 'endpoint.throttle_set')
        .execute();
      assert.equal(audit.length, 0);
      await setThrottle(h.services, ep.ws, ep.id, 5);
      assert.equal(
        (
          await db()
            .selectFrom('audit_events')
            .select('action')
            .where('target', '=', ep.id)
            .where('action', '=', 'endpoint.throttle_set')
            .execute()
        ).length,
        1,
      );
    });
  });
}
