/**
 * An endpoint's delivery history and its operations (src/webhooks/queue/deliveries.ts): keyset
 * paging, filters, resend, recover, held count, the chart's buckets and the signed test event.
 * Real receivers on 127.0.0.1, the real dispatcher, an injected clock.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { verifySignature } from '@wsops/client';
import { listAudit } from '../../src/audit/audit.js';
import { AppError } from '../../src/errors.js';
import { insertBatches } from '../../src/store/insert-batches.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint, disableEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { emitEvents } from '../../src/webhooks/events/outbox.js';
import {
  deliveryStats,
  heldCount,
  listDeliveries,
  recoverFailed,
  resendDelivery,
  sendTestEvent,
} from '../../src/webhooks/queue/deliveries.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { until } from '../helpers/processes.js';
import { answer, Receiver } from '../helpers/receiver.js';

const ASSET = { asset: { id: 'ast_x', asset_tag: 'AST-1', status: 'ASSIGNED' }, assigned_user_id: 'per_x', expected_return_at: null };
const HOUR = 3_600_000;

function refusal(code: string, param?: string) {
  return (err: unknown) => {
    assert.ok(err instanceof AppError, String(err));
    assert.equal(err.code, code, err.message);
    if (param) assert.equal(err.extra.param, param);
    return true;
  };
}

for (const dialect of DIALECTS) {
  describe(`delivery history [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    let other: string;
    let rx: Receiver;
    let dispatcher: Dispatcher;
    let path = 0;

    before(async () => {
      h = await createHarness(dialect, { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' });
      ws = await h.workspace({ seed: false });
      other = await h.workspace({ seed: false });
      rx = await new Receiver().start();
      dispatcher = new Dispatcher(h.services, { random: () => 0 });
    });
    after(async () => {
      await dispatcher.stop();
      await rx.stop();
      await h.close();
    });
    beforeEach(async () => {
      const open = await h.services.database.db
        .selectFrom('webhook_endpoints')
        .select(['id', 'workspace_id'])
        .where('status', '!=', 'disabled')
        .execute();
      for (const e of open) await disableEndpoint(h.services, e.workspace_id, e.id);
    });

    const drain = async () => {
      let total = 0;
      for (let n = await dispatcher.runOnce(); n > 0; n = await dispatcher.runOnce()) total += n;
      return total;
    };
    /** `count` asset.assigned events; those of one call share one created_at (ties broken by id). */
    const emit = (count = 1, workspaceId = ws) =>
      h.services.database.db.transaction().execute((trx) =>
        emitEvents(
          trx,
          workspaceId,
          Array.from({ length: count }, () => ({ type: 'asset.assigned' as const, data: ASSET })),
          h.clock(),
        ),
      );
    const newEndpoint = async (workspaceId = ws) => {
      const p = `/history-${++path}`;
      const created = await createEndpoint(h.services, workspaceId, {
        url: rx.url(p),
        scopes: 'assets:read',
        events: 'asset.assigned,asset.returned',
      });
      await drain();
      rx.received.length = 0;
      return { ...created, path: p };
    };
    const endpointRow = (id: string) =>
      h.services.database.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const allPages = async (endpointId: string, filters: { outcome?: string; eventType?: string; limit?: number } = {}) => {
      const seen: string[] = [];
      let before: string | undefined;
      for (let guard = 0; guard < 1000; guard++) {
        const page = await listDeliveries(h.services, ws, endpointId, { ...filters, before });
        seen.push(...page.deliveries.map((d) => d.job_id));
        if (!page.next_before) return seen;
        before = page.next_before;
      }
      throw new Error('paging did not end');
    };

    it('keyset paging returns every delivery exactly once, newest first, also while new events arrive', async () => {
      const ep = await newEndpoint();
      for (let i = 0; i < 7; i++) {
        await emit(3); // three jobs with the same created_at: the id breaks the tie
        h.clock.advance(1000);
      }
      await drain();
      const all = await h.services.database.db
        .selectFrom('delivery_jobs')
        .select(['id', 'created_at'])
        .where('endpoint_id', '=', ep.id)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute();
      assert.equal(all.length, 22, '21 events and the verification');
      const first = await listDeliveries(h.services, ws, ep.id, { limit: 4 });
      await emit(2); // newer than the first page: must not shift the older pages
      const rest = await allPages(ep.id, { limit: 4 });
      const seen: string[] = [...first.deliveries.map((d) => d.job_id)];
      let before = first.next_before ?? undefined;
      while (before) {
        const page = await listDeliveries(h.services, ws, ep.id, { limit: 4, before });
        seen.push(...page.deliveries.map((d) => d.job_id));
        before = page.next_before ?? undefined;
      }
      assert.deepEqual(
        seen,
        all.map((j) => j.id),
      );
      assert.equal(new Set(rest).size, rest.length, 'no duplicates');
      assert.equal(rest.length, 24, 'a fresh walk includes the two new events');
    });

    it('each event shows its attempts newest first: time, status code, latency, error class, response snippet, next retry', async () => {
      const ep = await newEndpoint();
      rx.on(ep.path, answer(503, `<busy>${'x'.repeat(1000)}`));
      await emit();
      await drain();
      h.clock.advance(60_000);
      await drain();
      const [d] = (await listDeliveries(h.services, ws, ep.id, { eventType: 'asset.assigned' })).deliveries;
      assert.ok(d);
      assert.equal(d.state, 'pending');
      assert.equal(d.attempts_made, 2);
      assert.deepEqual(
        d.attempts.map((a) => a.attempt),
        [2, 1],
      );
      const a = d.attempts[0]!;
      assert.match(a.delivery_id, /^dlv_/);
      assert.equal(a.status_code, 503);
      assert.equal(a.outcome, 'failed');
      assert.equal(a.error_class, 'http_status');
      assert.ok(a.latency_ms >= 0);
      assert.equal(a.response_snippet?.length, 300, 'the snippet is cut to 300 characters');
      assert.ok(a.response_snippet?.startsWith('<busy>'));
      assert.equal(a.next_attempt_at, new Date(Date.parse(a.attempted_at) + 3 * 60_000).toISOString());
      assert.equal(d.next_attempt_at, a.next_attempt_at);
    });

    it('filters by outcome and event type; an unknown outcome, event type or cursor is refused with the parameter named', async () => {
      const ep = await newEndpoint();
      await emit(2);
      await drain();
      rx.on(ep.path, answer(500));
      await emit();
      await drain();
      const succeeded = await allPages(ep.id, { outcome: 'succeeded' });
      assert.equal(succeeded.length, 3, 'the verification and two events');
      const pending = await listDeliveries(h.services, ws, ep.id, { outcome: 'pending' });
      assert.equal(pending.deliveries.length, 1);
      assert.equal(pending.deliveries[0]?.attempts[0]?.status_code, 500);
      const verification = await listDeliveries(h.services, ws, ep.id, { eventType: 'endpoint.verification' });
      assert.deepEqual(
        verification.deliveries.map((d) => d.event_type),
        ['endpoint.verification'],
      );
      assert.equal((await listDeliveries(h.services, ws, ep.id, { outcome: 'held' })).deliveries.length, 0);
      await assert.rejects(listDeliveries(h.services, ws, ep.id, { outcome: 'broken' }), refusal('invalid_parameter', 'outcome'));
      await assert.rejects(listDeliveries(h.services, ws, ep.id, { eventType: 'asset.sold' }), refusal('invalid_parameter', 'event_type'));
      await assert.rejects(listDeliveries(h.services, ws, ep.id, { before: 'not-a-cursor' }), refusal('invalid_cursor', 'before'));
      await assert.rejects(listDeliveries(h.services, ws, ep.id, { limit: 1000 }), refusal('invalid_parameter', 'limit'));
    });

    it('resend makes a new attempt now: a new delivery id, the same event id, recorded in the audit trail', async () => {
      const ep = await newEndpoint();
      const [event] = await emit();
      await drain();
      const [first] = rx.at(ep.path);
      assert.ok(first && event);
      const [before] = (await listDeliveries(h.services, ws, ep.id, { eventType: 'asset.assigned' })).deliveries;
      const deliveryId = before?.attempts[0]?.delivery_id as string;
      const resent = await resendDelivery(h.services, ws, ep.id, deliveryId, 'console:ann@example.com');
      assert.equal(resent.event_id, event.id);
      assert.equal(await drain(), 1);
      const [, second] = rx.at(ep.path);
      assert.ok(second);
      assert.notEqual(second.headers['x-service-delivery'], first.headers['x-service-delivery']);
      assert.equal(JSON.parse(second.body).id, event.id, 'same event id: the receiver can deduplicate');
      const [after] = (await listDeliveries(h.services, ws, ep.id, { eventType: 'asset.assigned' })).deliveries;
      assert.equal(after?.state, 'succeeded');
      assert.deepEqual(
        after?.attempts.map((a) => a.attempt),
        [2, 1],
      );
      const audit = (await listAudit(h.services.database.db, ws)).find((a) => a.action === 'delivery.resent');
      assert.equal(audit?.actor, 'console:ann@example.com');
      assert.equal(audit?.detail.event_id, event.id);
    });

    it('resend of a delivery a worker is attempting now is refused (it would be sent twice at once and the attempt lost); once recorded it is resent', async () => {
      const ep = await newEndpoint();
      let hold: (() => void) | undefined;
      rx.on(ep.path, (req, res, body) => {
        hold = () => answer(200)(req, res, body);
      });
      const [event] = await emit();
      const attempting = dispatcher.runOnce();
      await until(() => hold !== undefined, 10_000, 'the attempt to reach the receiver');
      const job = (await listDeliveries(h.services, ws, ep.id, { eventType: 'asset.assigned' })).deliveries[0]?.job_id as string;
      await assert.rejects(resendDelivery(h.services, ws, ep.id, job), (err: unknown) => {
        assert.ok(err instanceof AppError);
        assert.equal(err.code, 'invalid_state');
        assert.match(err.message, /being attempted now/);
        return true;
      });
      hold?.();
      await attempting;
      rx.on(ep.path, answer(200));
      const [recorded] = (await listDeliveries(h.services, ws, ep.id, { eventType: 'asset.assigned' })).deliveries;
      assert.equal(recorded?.state, 'succeeded');
      assert.equal(recorded?.attempts.length, 1, 'the first attempt is recorded');
      await resendDelivery(h.services, ws, ep.id, job);
      assert.equal(await drain(), 1);
      assert.deepEqual(
        rx.at(ep.path).map((r) => JSON.parse(r.body).id),
        [event?.id, event?.id],
        'sent once, then once more',
      );
    });

    it('resend and test events are refused for a disabled endpoint (switch it on first) and change nothing', async () => {
      const ep = await newEndpoint();
      await emit();
      await drain();
      const [d] = (await listDeliveries(h.services, ws, ep.id, { eventType: 'asset.assigned' })).deliveries;
      await disableEndpoint(h.services, ws, ep.id);
      await assert.rejects(resendDelivery(h.services, ws, ep.id, d?.job_id as string), (err: unknown) => {
        assert.ok(err instanceof AppError);
        assert.equal(err.code, 'invalid_state');
        assert.match(err.message, /switch it on first/);
        return true;
      });
      await assert.rejects(sendTestEvent(h.services, ws, ep.id), refusal('invalid_state'));
      await assert.rejects(recoverFailed(h.services, ws, ep.id, '2026-01-01T00:00:00Z'), refusal('invalid_state'));
      const [same] = (await listDeliveries(h.services, ws, ep.id, { eventType: 'asset.assigned' })).deliveries;
      assert.equal(same?.state, 'succeeded');
      assert.equal((await listDeliveries(h.services, ws, ep.id, { eventType: 'endpoint.test' })).deliveries.length, 0);
    });

    it('recover makes every delivery that spent all its attempts since the chosen time due again, and only those', async () => {
      const ep = await newEndpoint();
      const exhaust = async () => {
        for (let i = 0; i < 13; i++) {
          await drain();
          h.clock.advance(5 * HOUR);
        }
      };
      rx.on(ep.path, answer(500));
      await emit();
      await exhaust();
      const midway = new Date(h.clock()).toISOString();
      rx.on(ep.path, answer(200));
      await emit(); // a success between the two resets the failure count (no auto-disable)
      await drain();
      rx.on(ep.path, answer(500));
      h.clock.advance(1000);
      await emit();
      await exhaust();
      assert.equal((await endpointRow(ep.id)).status, 'active');
      const failed = await allPages(ep.id, { outcome: 'failed' });
      assert.equal(failed.length, 2);
      await assert.rejects(recoverFailed(h.services, ws, ep.id, 'yesterday'), refusal('invalid_parameter', 'since'));
      await assert.rejects(recoverFailed(h.services, ws, ep.id, '2999-01-01T00:00:00Z'), refusal('invalid_parameter', 'since'));
      const recovered = await recoverFailed(h.services, ws, ep.id, midway);
      assert.equal(recovered.recovered, 1, 'only the event after the chosen time');
      rx.on(ep.path, answer(200));
      rx.received.length = 0;
      assert.equal(await drain(), 1);
      assert.equal((await allPages(ep.id, { outcome: 'failed' })).length, 1);
      const audit = (await listAudit(h.services.database.db, ws)).find((a) => a.action === 'deliveries.recovered');
      assert.equal(audit?.detail.recovered, 1);
    });

    it('a disabled endpoint shows how many deliveries are held for it', async () => {
      const ep = await newEndpoint();
      rx.on(ep.path, answer(500));
      await emit(3);
      await disableEndpoint(h.services, ws, ep.id);
      assert.equal(await heldCount(h.services, ws, ep.id), 3);
      assert.equal((await listDeliveries(h.services, ws, ep.id, { outcome: 'held' })).deliveries.length, 3);
    });

    it("another workspace's endpoint or delivery id is not found, and nothing changes", async () => {
      const mine = await newEndpoint();
      await emit();
      await drain();
      const [d] = (await listDeliveries(h.services, ws, mine.id, { eventType: 'asset.assigned' })).deliveries;
      const deliveryId = d?.attempts[0]?.delivery_id as string;
      const theirs = await newEndpoint(other);
      await assert.rejects(listDeliveries(h.services, other, mine.id), refusal('not_found'));
      await assert.rejects(heldCount(h.services, other, mine.id), refusal('not_found'));
      await assert.rejects(deliveryStats(h.services, other, mine.id, '24h'), refusal('not_found'));
      await assert.rejects(resendDelivery(h.services, other, mine.id, deliveryId), refusal('not_found'));
      await assert.rejects(
        resendDelivery(h.services, other, theirs.id, deliveryId),
        refusal('not_found'),
        'a delivery of another endpoint',
      );
      await assert.rejects(recoverFailed(h.services, other, mine.id, '2026-01-01T00:00:00Z'), refusal('not_found'));
      await assert.rejects(sendTestEvent(h.services, other, mine.id), refusal('not_found'));
      assert.equal(await drain(), 0, 'nothing was queued');
      assert.equal((await listAudit(h.services.database.db, other)).filter((a) => a.action.startsWith('deliver')).length, 0);
    });

    it('a test event is a signed endpoint.test delivered to that one endpoint only', async () => {
      const ep = await newEndpoint();
      const bystander = await newEndpoint();
      const sent = await sendTestEvent(h.services, ws, ep.id, 'console:ann@example.com');
      assert.equal(await drain(), 1);
      const [got] = rx.at(ep.path);
      assert.ok(got);
      assert.equal(rx.at(bystander.path).length, 0);
      assert.equal(got.headers['x-service-event'], 'endpoint.test');
      verifySignature(got.body, got.headers['x-service-signature'] as string, ep.secret, { now: h.clock() });
      const body = JSON.parse(got.body);
      assert.equal(body.id, sent.event_id);
      assert.equal(body.type, 'endpoint.test');
      assert.equal(body.data.endpoint_id, ep.id);
      const audit = (await listAudit(h.services.database.db, ws)).find((a) => a.action === 'endpoint.test_sent');
      assert.equal(audit?.target, ep.id);
    });

    it('a failed test delivery is never counted toward auto-disable nor resets the failure count', async () => {
      const ep = await newEndpoint();
      rx.on(ep.path, answer(500));
      await emit();
      await drain();
      assert.equal((await endpointRow(ep.id)).consecutive_failures, 1);
      await sendTestEvent(h.services, ws, ep.id);
      await drain();
      assert.equal((await endpointRow(ep.id)).consecutive_failures, 1, 'a failed test does not count');
      rx.on(ep.path, answer(200));
      await sendTestEvent(h.services, ws, ep.id);
      await drain();
      assert.equal((await endpointRow(ep.id)).consecutive_failures, 1, 'a successful test does not reset the count');
    });

    it('the chart buckets attempts hourly over 24 h and six-hourly over 7 d: count, success rate, median and mean latency', async () => {
      const ep = await newEndpoint();
      const now = h.clock();
      const hourStart = Math.floor(now / HOUR) * HOUR;
      const rows = [
        [hourStart + 1000, 'succeeded', 10],
        [hourStart + 2000, 'succeeded', 30],
        [hourStart + 3000, 'failed', 1000],
        [hourStart + 4000, 'succeeded', 20],
        [hourStart - 2 * HOUR, 'failed', 50],
        [hourStart - 30 * HOUR, 'succeeded', 70], // outside 24 h, inside 7 d
        [hourStart - 8 * 24 * HOUR, 'succeeded', 70], // outside both
      ] as const;
      await h.services.database.db
        .insertInto('delivery_attempts')
        .values(
          rows.map(([at, outcome, latency], i) => ({
            id: `dlv_chart${ep.id}${i}`,
            job_id: `job_chart${i}`,
            workspace_id: ws,
            event_id: `evt_chart${i}`,
            event_type: 'asset.assigned',
            endpoint_id: ep.id,
            attempt: 1,
            attempted_at: new Date(at).toISOString(),
            status_code: outcome === 'succeeded' ? 200 : 500,
            outcome,
            error_class: outcome === 'succeeded' ? null : 'http_status',
            latency_ms: latency,
            response_body: null,
            next_attempt_at: null,
          })),
        )
        .execute();
      const day = await deliveryStats(h.services, ws, ep.id, '24h', now);
      assert.equal(day.buckets.length, 24);
      const last = day.buckets[23]!;
      assert.equal(last.start, new Date(hourStart).toISOString());
      // The verification attempt of newEndpoint() also falls in this hour (latency unknown).
      const verification = await h.services.database.db
        .selectFrom('delivery_attempts')
        .select('latency_ms')
        .where('endpoint_id', '=', ep.id)
        .where('event_type', '=', 'endpoint.verification')
        .executeTakeFirstOrThrow();
      const latencies = [10, 30, 1000, 20, verification.latency_ms].sort((a, b) => a - b);
      assert.equal(last.attempts, 5);
      assert.equal(last.succeeded, 4);
      assert.equal(last.failed, 1);
      assert.equal(last.success_rate, 0.8);
      assert.equal(last.p50_latency_ms, latencies[2]);
      assert.equal(last.avg_latency_ms, Math.round(latencies.reduce((s, x) => s + x, 0) / 5));
      assert.equal(day.buckets[21]?.failed, 1);
      assert.equal(day.buckets[20]?.attempts, 0);
      assert.equal(day.buckets[20]?.success_rate, null);
      assert.equal(
        day.buckets.reduce((s, b) => s + b.attempts, 0),
        6,
      );
      const week = await deliveryStats(h.services, ws, ep.id, '7d', now);
      assert.equal(week.buckets.length, 28);
      assert.equal(
        week.buckets.reduce((s, b) => s + b.attempts, 0),
        7,
      );
      assert.ok(week.buckets.every((b) => Date.parse(b.start) % (6 * HOUR) === 0));
    });

    it("the chart's counts and median stay exact when attempts share an hour and a latency, written in several batches", async () => {
      // The chart reads an hourly rollup kept by the database on every insert (migration 0013):
      // each batch the dispatcher writes must add to it, however many rows share a key.
      // Registered only (never dispatched here): no verification attempt joins the chart.
      const { id: endpointId } = await createEndpoint(h.services, ws, {
        url: rx.url('/chart-batches'),
        scopes: 'assets:read',
        events: 'asset.assigned',
      });
      const now = h.clock();
      const hourStart = Math.floor(now / HOUR) * HOUR;
      const latencies = [
        [5, 5, 7, 300],
        [5, 7, 7, 7, 9, 9],
        [300, 2],
      ];
      let n = 0;
      const db = h.services.database.db;
      for (const batch of latencies) {
        await db.transaction().execute((trx) =>
          insertBatches(
            trx,
            'delivery_attempts',
            batch.map((latency) => {
              n++;
              return {
                id: `dlv_batch${n}`,
                job_id: `job_batch${n}`,
                workspace_id: ws,
                event_id: `evt_batch${n}`,
                event_type: 'asset.assigned',
                endpoint_id: endpointId,
                attempt: 1,
                attempted_at: new Date(hourStart + n * 1000).toISOString(),
                status_code: n % 3 ? 200 : 500,
                outcome: n % 3 ? ('succeeded' as const) : ('failed' as const),
                error_class: n % 3 ? null : 'http_status',
                latency_ms: latency,
                response_body: null,
                next_attempt_at: null,
              };
            }),
          ),
        );
      }
      const all = latencies.flat().sort((a, b) => a - b);
      const expected = { attempts: 12, succeeded: 8, p50: all[5], avg: Math.round(all.reduce((s, x) => s + x, 0) / 12) };
      for (const w of ['24h', '7d'] as const) {
        const stats = await deliveryStats(h.services, ws, endpointId, w, now);
        const b = stats.buckets[stats.buckets.length - 1]!;
        assert.deepEqual(
          { attempts: b.attempts, succeeded: b.succeeded, p50: b.p50_latency_ms, avg: b.avg_latency_ms },
          expected,
          `${w}: lower middle of 12 latencies is the 6th`,
        );
      }
    });
  });
}
