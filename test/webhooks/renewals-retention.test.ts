/** vendor.renewal_approaching once per renewal date; delivery history pruned by the retention setting. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { correctRecord } from '../../src/actions/correct.js';
import { vendors } from '../../src/registers/catalogue.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { checkRenewals } from '../../src/webhooks/events/renewals.js';
import { pruneDeliveryHistory } from '../../src/webhooks/queue/retention.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { Receiver } from '../helpers/receiver.js';

const DAY = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

for (const dialect of DIALECTS) {
  describe(`renewal check and retention [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    let vendorId: string;
    before(async () => {
      h = await createHarness(dialect, { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true', WSOPS_DELIVERY_RETENTION_DAYS: '7' });
      ws = await h.workspace({ seed: false });
      vendorId = 'ven_renewaltest0001';
      const at = new Date(h.clock()).toISOString();
      await h.services.records.put(
        ws,
        vendors,
        vendors.withDerived({
          id: vendorId,
          name: 'Acme Cloud',
          category: 'SOFTWARE',
          status: 'ACTIVE',
          owner_id: null,
          location_id: null,
          annual_cost_minor: 120000,
          currency: 'EUR',
          seats_purchased: 10,
          seats_assigned: 5,
          contract_start_date: '2025-01-01',
          // Deadline 40 days away: outside the 30-day window for now.
          renewal_date: day(h.clock() + 70 * DAY),
          notice_period_days: 30,
          cancellation_deadline: null,
          auto_renews: true,
          created_at: at,
          updated_at: at,
        }),
      );
    });
    after(() => h.close());

    const renewalEvents = () =>
      h.services.database.db
        .selectFrom('events')
        .select(['id', 'body'])
        .where('workspace_id', '=', ws)
        .where('type', '=', 'vendor.renewal_approaching')
        .execute();

    it('sends vendor.renewal_approaching once per renewal date when the cancellation deadline first comes within 30 days, never twice', async () => {
      await checkRenewals(h.services, ws);
      assert.equal((await renewalEvents()).length, 0, 'deadline 40 days away: nothing yet');
      h.clock.advance(10 * DAY);
      const first = await checkRenewals(h.services, ws);
      assert.equal(first.events.length, 1, 'deadline exactly 30 days away: warned');
      const [event] = await renewalEvents();
      const body = JSON.parse(event!.body);
      assert.deepEqual(Object.keys(body.data.vendor), [
        'id',
        'name',
        'renewal_date',
        'notice_period_days',
        'cancellation_deadline',
        'auto_renews',
      ]);
      assert.equal(body.data.vendor.cancellation_deadline, day(h.clock() + 30 * DAY));
      for (let i = 0; i < 5; i++) {
        h.clock.advance(15 * 60_000);
        await checkRenewals(h.services, ws);
      }
      await Promise.all([checkRenewals(h.services, ws), checkRenewals(h.services, ws)]);
      assert.equal((await renewalEvents()).length, 1, 'never two for one renewal date');
    });

    it('a new renewal date gets its own warning; a correction itself emits nothing', async () => {
      await correctRecord(h.services, ws, 'vendors', vendorId, [`renewal_date=${day(h.clock() + 45 * DAY)}`]);
      assert.equal((await renewalEvents()).length, 1, 'correction sends no event');
      await checkRenewals(h.services, ws);
      assert.equal((await renewalEvents()).length, 2);
    });

    it('a deadline already passed, or a cancelled vendor, gets no warning', async () => {
      await correctRecord(h.services, ws, 'vendors', vendorId, [`renewal_date=${day(h.clock() + 10 * DAY)}`]);
      await checkRenewals(h.services, ws);
      await correctRecord(h.services, ws, 'vendors', vendorId, [`renewal_date=${day(h.clock() + 50 * DAY)}`, 'status=CANCELLED']);
      await checkRenewals(h.services, ws);
      assert.equal((await renewalEvents()).length, 2);
    });

    it('delivery history older than the retention setting is pruned; pending deliveries are kept', async () => {
      const rx = await new Receiver().start();
      try {
        await createEndpoint(h.services, ws, { url: rx.url('/retention'), scopes: 'vendors:read', events: 'vendor.renewal_approaching' });
        const d = new Dispatcher(h.services);
        await d.runOnce();
        await d.stop();
        const db = h.services.database.db;
        const count = async () =>
          Number(
            (
              await db
                .selectFrom('delivery_attempts')
                .select((eb) => eb.fn.countAll<number>().as('n'))
                .where('workspace_id', '=', ws)
                .executeTakeFirstOrThrow()
            ).n,
          );
        assert.equal(await count(), 1);
        h.clock.advance(6 * DAY);
        await pruneDeliveryHistory(h.services);
        assert.equal(await count(), 1, 'younger than 7 days: kept');
        h.clock.advance(2 * DAY);
        const pruned = await pruneDeliveryHistory(h.services);
        assert.equal(await count(), 0);
        assert.ok(pruned.attempts >= 1 && pruned.jobs >= 1);
        // The event itself is the events API's, kept by its own setting (WSOPS_EVENT_RETENTION_DAYS, 30).
        assert.equal(pruned.events, 0);
        h.clock.advance(23 * DAY);
        assert.ok((await pruneDeliveryHistory(h.services)).events >= 1);
      } finally {
        await rx.stop();
      }
    });

    it("pruning keeps the chart's hourly rollup equal to the attempts kept, even in the hour the cutoff falls in", async () => {
      const db = h.services.database.db;
      const endpointId = 'we_rolluppruning01';
      const cutoff = h.clock() - 7 * DAY;
      const hourStart = Math.floor(cutoff / 3_600_000) * 3_600_000;
      // Same hour and latency on both sides of the cutoff, and an hour wholly before it.
      const times = [hourStart - 3_600_000, hourStart + 1, cutoff - 1, cutoff + 1, cutoff + 2, h.clock() - 1000];
      await db
        .insertInto('delivery_attempts')
        .values(
          times.map((t, i) => ({
            id: `dlv_rollup${i}`,
            job_id: `job_rollup${i}`,
            workspace_id: ws,
            event_id: `evt_rollup${i}`,
            event_type: 'vendor.renewal_approaching',
            endpoint_id: endpointId,
            attempt: 1,
            attempted_at: new Date(t).toISOString(),
            status_code: i % 2 ? 200 : 500,
            outcome: i % 2 ? ('succeeded' as const) : ('failed' as const),
            error_class: i % 2 ? null : 'http_status',
            latency_ms: 40,
            response_body: null,
            next_attempt_at: null,
          })),
        )
        .execute();
      const rollup = async () =>
        (
          await db
            .selectFrom('delivery_attempt_hours')
            .select(['hour', 'attempts', 'succeeded'])
            .where('endpoint_id', '=', endpointId)
            .orderBy('hour')
            .execute()
        ).map((r) => [r.hour, Number(r.attempts), Number(r.succeeded)]);
      const iso = (t: number) => new Date(t).toISOString().slice(0, 13);
      assert.deepEqual(await rollup(), [
        [iso(hourStart - 3_600_000), 1, 0],
        [iso(hourStart), 4, 2],
        [iso(h.clock() - 1000), 1, 1],
      ]);
      await pruneDeliveryHistory(h.services);
      assert.deepEqual(await rollup(), [
        [iso(hourStart), 2, 1],
        [iso(h.clock() - 1000), 1, 1],
      ]);
    });
  });
}
