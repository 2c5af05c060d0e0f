/**
 * Signed webhooks end to end: real receivers on 127.0.0.1, the real dispatcher, an injected
 * clock for the retry schedule (no test sleeps for minutes).
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { verifySignature } from '@wsops/client';
import { pino } from 'pino';
import Stripe from 'stripe';
import { listAudit } from '../../src/audit/audit.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint, disableEndpoint, enableEndpoint, rotateSecret, verifyEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { emitEvent } from '../../src/webhooks/events/outbox.js';
import { ATTEMPT_DELAYS_MS } from '../../src/webhooks/queue/schedule.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { answer, Receiver } from '../helpers/receiver.js';

const stripe = new Stripe('sk_test_not_used_for_network');

for (const dialect of DIALECTS) {
  describe(`webhook delivery [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    let rx: Receiver;
    let dispatcher: Dispatcher;
    let path = 0;
    /** The dispatcher's log lines, as a server writes them to its standard output. */
    const logged: Record<string, unknown>[] = [];

    before(async () => {
      h = await createHarness(dialect, { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' });
      ws = await h.workspace({ seed: false });
      rx = await new Receiver().start();
      const logger = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
      dispatcher = new Dispatcher({ ...h.services, logger }, { random: () => 0 });
    });
    after(async () => {
      await dispatcher.stop();
      await rx.stop();
      await h.close();
    });
    beforeEach(async () => {
      // Each test starts with no endpoint delivering, so the five-endpoint limit never leaks between tests.
      const open = await h.services.database.db
        .selectFrom('webhook_endpoints')
        .select('id')
        .where('workspace_id', '=', ws)
        .where('status', '!=', 'disabled')
        .execute();
      for (const e of open) await disableEndpoint(h.services, ws, e.id);
    });

    const drain = async () => {
      let total = 0;
      for (let n = await dispatcher.runOnce(); n > 0; n = await dispatcher.runOnce()) total += n;
      return total;
    };
    const emit = (
      type: 'asset.assigned' | 'vendor.renewal_approaching',
      data: unknown = {
        asset: { id: 'ast_x', asset_tag: 'AST-1', status: 'ASSIGNED' },
        assigned_user_id: 'per_x',
        expected_return_at: null,
      },
    ) => h.services.database.db.transaction().execute((trx) => emitEvent(trx, ws, type, data, h.clock()));
    const newEndpoint = async (options: { events?: string; scopes?: string; verify?: boolean } = {}) => {
      const p = `/hook-${++path}`;
      const created = await createEndpoint(h.services, ws, {
        url: rx.url(p),
        scopes: options.scopes ?? 'assets:read',
        events: options.events ?? 'asset.assigned',
      });
      if (options.verify !== false) {
        await drain();
        rx.received.length = 0;
      }
      return { ...created, path: p };
    };
    const firstAssetAttempt = (endpointId: string) =>
      h.services.database.db
        .selectFrom('delivery_attempts')
        .selectAll()
        .where('endpoint_id', '=', endpointId)
        .where('event_type', '=', 'asset.assigned')
        .executeTakeFirst();
    const status = async (id: string) =>
      h.services.database.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

    it('registration sends one signed endpoint.verification; a 2xx answer activates the endpoint', async () => {
      const ep = await newEndpoint({ verify: false });
      assert.equal(ep.status, 'unverified');
      assert.match(ep.secret, /^whsec_/);
      await drain();
      const [got] = rx.at(ep.path);
      assert.ok(got);
      assert.equal(got.headers['x-service-event'], 'endpoint.verification');
      const body = JSON.parse(got.body);
      assert.deepEqual(Object.keys(body), ['id', 'type', 'created', 'api_version', 'data']);
      assert.equal(body.api_version, '1');
      assert.equal(body.data.endpoint_id, ep.id);
      assert.match(body.data.challenge, /^[0-9a-f]{32}$/);
      verifySignature(got.body, got.headers['x-service-signature'] as string, ep.secret, { now: h.clock() });
      assert.equal((await status(ep.id)).status, 'active');
    });

    it('an endpoint that has not answered its verification with a 2xx receives no other events', async () => {
      rx.on('/unverified', answer(500));
      const ep = await createEndpoint(h.services, ws, { url: rx.url('/unverified'), scopes: 'assets:read', events: 'asset.assigned' });
      await drain();
      assert.equal((await status(ep.id)).status, 'unverified');
      await emit('asset.assigned');
      await drain();
      assert.deepEqual(
        rx.at('/unverified').map((r) => r.headers['x-service-event']),
        ['endpoint.verification'],
      );
      rx.on('/unverified', answer(204));
      await verifyEndpoint(h.services, ws, ep.id);
      await drain();
      assert.equal((await status(ep.id)).status, 'active');
    });

    it('endpoint verify sends the verification it still owes again now (same event, new delivery id), and no stale retry of it arrives once the endpoint is active', async () => {
      rx.on('/late', answer(400));
      const ep = await createEndpoint(h.services, ws, { url: rx.url('/late'), scopes: 'assets:read', events: 'asset.assigned' });
      await drain();
      assert.equal(rx.at('/late').length, 1, 'the first verification, answered 400; its retry is owed');
      rx.on('/late', answer(204));
      const resent = await verifyEndpoint(h.services, ws, ep.id);
      assert.equal(resent.verification_event_id, ep.verification_event_id, 'the owed verification, not a second one');
      await drain();
      assert.equal((await status(ep.id)).status, 'active');
      h.clock.advance(24 * 3600_000);
      await drain();
      const got = rx.at('/late');
      assert.equal(got.length, 2, 'the first attempt and the resend, nothing after');
      assert.deepEqual(
        got.map((r) => JSON.parse(r.body).id),
        [ep.verification_event_id, ep.verification_event_id],
      );
      assert.notEqual(got[0]?.headers['x-service-delivery'], got[1]?.headers['x-service-delivery']);
    });

    it('re-enabling an endpoint disabled before it was verified sends the verification it still owed, not a second one beside it', async () => {
      rx.on('/held', answer(500));
      const ep = await createEndpoint(h.services, ws, { url: rx.url('/held'), scopes: 'assets:read', events: 'asset.assigned' });
      await drain();
      await disableEndpoint(h.services, ws, ep.id);
      rx.on('/held', answer(200));
      const enabled = await enableEndpoint(h.services, ws, ep.id);
      assert.equal(enabled.verification_event_id, ep.verification_event_id);
      await drain();
      assert.equal((await status(ep.id)).status, 'active');
      h.clock.advance(24 * 3600_000);
      await drain();
      assert.equal(rx.at('/held').length, 2, 'the first attempt and the one after enable, nothing after');
    });

    it('the signing secret is stored encrypted, never in plain text', async () => {
      const ep = await newEndpoint();
      const row = await status(ep.id);
      assert.ok(!JSON.stringify(row).includes(ep.secret));
    });

    it('an event goes to every active endpoint subscribed to it, with the headers and body of the contract, verified by our verifier and by Stripe', async () => {
      const a = await newEndpoint();
      const b = await newEndpoint({ events: 'asset.assigned,asset.returned' });
      const notSubscribed = await newEndpoint({ events: 'asset.returned' });
      const event = await emit('asset.assigned');
      assert.equal(event.jobs, 2);
      await drain();
      for (const ep of [a, b]) {
        const got = rx.at(ep.path);
        assert.equal(got.length, 1);
        const r = got[0]!;
        assert.equal(r.headers['content-type'], 'application/json');
        assert.equal(r.headers['x-service-event'], 'asset.assigned');
        assert.match(String(r.headers['x-service-delivery']), /^dlv_/);
        const signature = String(r.headers['x-service-signature']);
        assert.match(signature, /^t=\d+,v1=[0-9a-f]{64}$/);
        const body = JSON.parse(r.body);
        assert.equal(body.id, event.id);
        assert.match(body.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        assert.deepEqual(body.data, {
          asset: { id: 'ast_x', asset_tag: 'AST-1', status: 'ASSIGNED' },
          assigned_user_id: 'per_x',
          expected_return_at: null,
        });
        verifySignature(r.body, signature, ep.secret, { now: h.clock() });
        const viaStripe = stripe.webhooks.constructEvent(r.body, signature, ep.secret, 300, undefined, Math.floor(h.clock() / 1000));
        assert.equal(viaStripe.id, event.id);
      }
      assert.equal(rx.at(notSubscribed.path).length, 0);
      assert.notEqual(rx.at(a.path)[0]?.headers['x-service-delivery'], rx.at(b.path)[0]?.headers['x-service-delivery']);
    });

    it('retries follow the schedule (0, 1, 3, 5, 30 min, 1, 2, 3, 3, 4, 4 h, 3 h 30): twelve attempts, same event id, a new delivery id each', async () => {
      const ep = await newEndpoint();
      rx.on(ep.path, answer(503));
      const event = await emit('asset.assigned');
      const times: number[] = [];
      for (let attempt = 1; attempt <= 12; attempt++) {
        if (attempt > 1) {
          const delay = ATTEMPT_DELAYS_MS[attempt - 1]!;
          h.clock.advance(delay - 1);
          await drain();
          assert.equal(rx.at(ep.path).length, attempt - 1, `attempt ${attempt} not before its delay`);
          h.clock.advance(1);
        }
        await drain();
        assert.equal(rx.at(ep.path).length, attempt, `attempt ${attempt} at its time`);
        times.push(h.clock());
      }
      h.clock.advance(24 * 3600_000);
      await drain();
      assert.equal(rx.at(ep.path).length, 12, 'no thirteenth attempt');
      const got = rx.at(ep.path);
      assert.ok(got.every((r) => JSON.parse(r.body).id === event.id));
      assert.equal(new Set(got.map((r) => r.headers['x-service-delivery'])).size, 12);
      assert.ok(times[3]! - times[0]! <= 9 * 60_000, 'four attempts inside nine minutes');
      const span = (times[11]! - times[0]!) / 3600_000;
      assert.ok(span > 20 && span < 22, `about 21 hours (${span})`);
      const job = await h.services.database.db
        .selectFrom('delivery_jobs')
        .selectAll()
        .where('event_id', '=', event.id)
        .executeTakeFirstOrThrow();
      assert.equal(job.state, 'exhausted');
      await disableEndpoint(h.services, ws, ep.id);
    });

    it('every attempt is recorded: time, endpoint, event, status code, latency, error class, first 4 KB of the body, next attempt time', async () => {
      const ep = await newEndpoint();
      rx.on(ep.path, (_req, res) => res.writeHead(500).end('x'.repeat(10_000)));
      const event = await emit('asset.assigned');
      await drain();
      const [attempt] = await h.services.database.db.selectFrom('delivery_attempts').selectAll().where('event_id', '=', event.id).execute();
      assert.ok(attempt);
      assert.equal(attempt.endpoint_id, ep.id);
      assert.equal(attempt.status_code, 500);
      assert.equal(attempt.outcome, 'failed');
      assert.equal(attempt.error_class, 'http_status');
      assert.equal(attempt.response_body?.length, 4096);
      assert.equal(attempt.next_attempt_at, new Date(Date.parse(attempt.attempted_at) + 60_000).toISOString());
      assert.ok(attempt.latency_ms >= 0);
      await disableEndpoint(h.services, ws, ep.id);
    });

    it('each failed attempt is also a server log line: its ids, status, error class and when the next attempt is due; never the response body nor the secret', async () => {
      const ep = await newEndpoint();
      rx.on(ep.path, (_req, res) => res.writeHead(503).end('receiver-body-not-for-the-log'));
      const event = await emit('asset.assigned');
      logged.length = 0;
      await drain();
      const [attempt] = await h.services.database.db.selectFrom('delivery_attempts').selectAll().where('event_id', '=', event.id).execute();
      assert.ok(attempt);
      const lines = logged.filter((l) => l.event_id === event.id);
      assert.equal(lines.length, 1, 'one line for the one failed attempt');
      const [line] = lines;
      assert.equal(line?.level, 30, 'info: a failed attempt is the receiver’s trouble, retried on schedule');
      assert.equal(line?.msg, `delivery attempt failed; next attempt at ${attempt.next_attempt_at}`);
      assert.deepEqual(
        {
          delivery_id: line?.delivery_id,
          endpoint_id: line?.endpoint_id,
          workspace_id: line?.workspace_id,
          event_type: line?.event_type,
          attempt: line?.attempt,
          status_code: line?.status_code,
          error_class: line?.error_class,
          next_attempt_at: line?.next_attempt_at,
        },
        {
          delivery_id: attempt.id,
          endpoint_id: ep.id,
          workspace_id: ws,
          event_type: 'asset.assigned',
          attempt: 1,
          status_code: 503,
          error_class: 'http_status',
          next_attempt_at: attempt.next_attempt_at,
        },
      );
      const text = JSON.stringify(logged);
      assert.ok(!text.includes('receiver-body-not-for-the-log'), 'the response body stays in the delivery history');
      assert.ok(!text.includes(ep.secret), 'the signing secret is never logged');
      await disableEndpoint(h.services, ws, ep.id);
    });

    it('a redirect is a failure and is never followed', async () => {
      const ep = await newEndpoint();
      rx.on(ep.path, (_req, res) => res.writeHead(302, { location: rx.url('/redirect-target') }).end());
      await emit('asset.assigned');
      await drain();
      assert.equal(rx.at('/redirect-target').length, 0);
      const attempt = await firstAssetAttempt(ep.id);
      assert.equal(attempt?.error_class, 'redirect');
      await disableEndpoint(h.services, ws, ep.id);
    });

    it('a receiver that resets the connection is a failed attempt, not a crash', async () => {
      const ep = await newEndpoint();
      rx.on(ep.path, (req) => req.socket.destroy());
      await emit('asset.assigned');
      await drain();
      const attempt = await firstAssetAttempt(ep.id);
      assert.equal(attempt?.outcome, 'failed');
      assert.equal(attempt?.error_class, 'connection');
      await disableEndpoint(h.services, ws, ep.id);
    });

    it('20 failed attempts in a row disable the endpoint with the reason; owed deliveries are kept and resume when it is switched on', async () => {
      const ep = await newEndpoint();
      rx.on(ep.path, answer(500));
      for (let i = 0; i < 20; i++) await emit('asset.assigned');
      await drain();
      const disabled = await status(ep.id);
      assert.equal(disabled.status, 'disabled');
      assert.equal(disabled.disabled_reason, 'failures');
      assert.equal(disabled.consecutive_failures, 20);
      const audit = (await listAudit(h.services.database.db, ws)).find((a) => a.action === 'endpoint.disabled' && a.target === ep.id);
      assert.equal(audit?.actor, 'system', 'the automatic disable is in the audit trail, by the service');
      assert.equal(audit?.detail.reason, 'failures');
      const owed = await h.services.database.db
        .selectFrom('delivery_jobs')
        .select('id')
        .where('endpoint_id', '=', ep.id)
        .where('state', '=', 'held')
        .execute();
      assert.equal(owed.length, 20, 'nothing is lost: the owed deliveries are held, out of the queue');
      h.clock.advance(3600_000);
      await drain();
      assert.equal(rx.at(ep.path).length, 20, 'no delivery to a disabled endpoint');
      rx.on(ep.path, answer(200));
      await enableEndpoint(h.services, ws, ep.id);
      await drain();
      assert.equal((await status(ep.id)).status, 'active');
      const events = rx
        .at(ep.path)
        .slice(20)
        .map((r) => r.headers['x-service-event']);
      assert.equal(events[0], 'endpoint.verification');
      assert.equal(events.filter((e) => e === 'asset.assigned').length, 20, 'the owed deliveries resumed');
    });

    it('any 2xx resets the count of failures in a row', async () => {
      const ep = await newEndpoint();
      rx.on(ep.path, answer(500));
      for (let i = 0; i < 19; i++) await emit('asset.assigned');
      await drain();
      assert.equal((await status(ep.id)).consecutive_failures, 19);
      rx.on(ep.path, answer(200));
      await emit('asset.assigned');
      await drain();
      assert.equal((await status(ep.id)).consecutive_failures, 0);
      assert.equal((await status(ep.id)).status, 'active');
    });

    it('a user disabling an endpoint stops deliveries at once and frees its slot; its history stays readable', async () => {
      const eps = [];
      for (let i = 0; i < 5; i++) eps.push(await newEndpoint());
      await assert.rejects(
        createEndpoint(h.services, ws, { url: rx.url('/sixth'), scopes: 'assets:read', events: 'asset.assigned' }),
        /5 endpoints delivering at once/,
      );
      await emit('asset.assigned');
      await disableEndpoint(h.services, ws, eps[0]!.id);
      await drain();
      assert.equal(rx.at(eps[0]!.path).length, 0);
      assert.equal(rx.at(eps[1]!.path).length, 1);
      const sixth = await createEndpoint(h.services, ws, { url: rx.url('/sixth'), scopes: 'assets:read', events: 'asset.assigned' });
      assert.equal(sixth.status, 'unverified');
      await drain();
      const row = await status(eps[0]!.id);
      assert.equal(row.disabled_reason, 'user');
    });

    it('rotation: the new secret signs at once and the old one beside it (two v1) during the grace period, then alone', async () => {
      const ep = await newEndpoint();
      const rotated = await rotateSecret(h.services, ws, ep.id, 24);
      await emit('asset.assigned');
      await drain();
      const during = rx.at(ep.path).at(-1)!;
      const header = String(during.headers['x-service-signature']);
      assert.match(header, /^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
      verifySignature(during.body, header, rotated.secret, { now: h.clock() });
      verifySignature(during.body, header, ep.secret, { now: h.clock() });
      h.clock.advance(24 * 3600_000 + 1);
      await emit('asset.assigned');
      await drain();
      const later = rx.at(ep.path).at(-1)!;
      assert.match(String(later.headers['x-service-signature']), /^t=\d+,v1=[0-9a-f]{64}$/);
      assert.throws(() => verifySignature(later.body, String(later.headers['x-service-signature']), ep.secret, { now: h.clock() }));
      const immediate = await rotateSecret(h.services, ws, ep.id, 0);
      await emit('asset.assigned');
      await drain();
      const last = rx.at(ep.path).at(-1)!;
      verifySignature(last.body, String(last.headers['x-service-signature']), immediate.secret, { now: h.clock() });
      assert.throws(() => verifySignature(last.body, String(last.headers['x-service-signature']), rotated.secret, { now: h.clock() }));
    });

    it('registration refuses a write scope, an event outside the scopes, unknown events, and says which rule refused it', async () => {
      const url = rx.url('/refused');
      await assert.rejects(
        createEndpoint(h.services, ws, { url, scopes: 'assets:read,kpi:record', events: 'asset.assigned' }),
        /kpi:record is a write scope/,
      );
      await assert.rejects(
        createEndpoint(h.services, ws, { url, scopes: 'assets:read', events: 'vendor.renewal_approaching' }),
        /requires the scope vendors:read/,
      );
      await assert.rejects(createEndpoint(h.services, ws, { url, scopes: 'assets:read', events: 'asset.exploded' }), /unknown event/);
      await assert.rejects(
        createEndpoint(h.services, ws, { url, scopes: 'assets:read', events: 'endpoint.verification' }),
        /cannot be subscribed/,
      );
      const count = await h.services.database.db.selectFrom('webhook_endpoints').select('id').where('url', '=', url).execute();
      assert.equal(count.length, 0, 'nothing written');
    });
  });
}
