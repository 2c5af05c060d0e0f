/**
 * Real worker processes (`wsops serve --only worker`): a worker killed mid-delivery loses
 * nothing, and two workers sharing one database deliver each event to each endpoint once and
 * send the renewal warning once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { emitEvent } from '../../src/webhooks/events/outbox.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { until } from '../helpers/processes.js';
import { answer, Receiver } from '../helpers/receiver.js';
import { workerProcesses } from '../helpers/worker-processes.js';

/** The lease the workers take: the shortest the setting allows. */
const LEASE_SECONDS = 11;

for (const dialect of DIALECTS) {
  describe(`delivery workers as processes [${dialect}]`, () => {
    let h: Harness;
    let rx: Receiver;
    const workers = workerProcesses();
    const startWorker = () => workers.start(h.databaseUrl, { WSOPS_DELIVERY_LEASE_SECONDS: String(LEASE_SECONDS) });

    before(async () => {
      h = await createHarness(dialect, { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' });
      rx = await new Receiver().start();
    });
    after(async () => {
      await rx.stop();
      await h.close();
    });

    const activeEndpoint = async (ws: string, path: string, events: string, scopes: string) => {
      const ep = await createEndpoint(h.services, ws, { url: rx.url(path), scopes, events });
      const d = new Dispatcher(h.services);
      await d.runOnce();
      await d.stop();
      return ep;
    };

    it('a worker killed mid-attempt loses nothing: after its lease expires another worker delivers the event', async () => {
      const ws = await h.workspace({ seed: false });
      await activeEndpoint(ws, '/killed', 'asset.assigned', 'assets:read');
      let hung = false;
      rx.on('/killed', (req, res, body) => {
        if (JSON.parse(body).type === 'asset.assigned' && !hung) {
          hung = true; // hold the first attempt open: the worker dies while waiting for it
          return;
        }
        answer(200)(req, res, body);
      });
      const event = await h.services.database.db
        .transaction()
        .execute((trx) =>
          emitEvent(
            trx,
            ws,
            'asset.assigned',
            { asset: { id: 'ast_k', asset_tag: 'AST-K', status: 'ASSIGNED' }, assigned_user_id: 'per_k', expected_return_at: null },
            Date.now(),
          ),
        );
      const first = startWorker();
      await until(() => hung, 30_000, 'the first attempt');
      await workers.stop(first, 'SIGKILL');
      // The lease outlives the killed worker by its length: rather than wait for it, the job's
      // stored times move back by that length, as if the clock had moved on.
      const job = await h.services.database.db
        .selectFrom('delivery_jobs')
        .selectAll()
        .where('event_id', '=', event.id)
        .executeTakeFirstOrThrow();
      assert.ok(job.lease_until && job.next_attempt_at && job.locked_by, 'the killed worker had claimed the job');
      const earlier = (iso: string) => new Date(Date.parse(iso) - LEASE_SECONDS * 1000 - 1).toISOString();
      await h.services.database.db
        .updateTable('delivery_jobs')
        .set({ lease_until: earlier(job.lease_until), next_attempt_at: earlier(job.next_attempt_at) })
        .where('id', '=', job.id)
        .execute();
      startWorker();
      await until(
        () => rx.at('/killed').filter((r) => JSON.parse(r.body).id === event.id).length >= 2,
        40_000,
        'the retry by the second worker',
      );
      await until(
        async () =>
          (await h.services.database.db.selectFrom('delivery_jobs').select('state').where('id', '=', job.id).executeTakeFirstOrThrow())
            .state === 'succeeded',
        10_000,
        'the job to be recorded',
      );
      await workers.stopAll('SIGTERM');
    });

    it('two workers on one database: each event reaches each endpoint once, no attempt is made twice, and the renewal warning is sent once', async () => {
      const ws = await h.workspace();
      const paths = ['/w1', '/w2', '/w3'];
      for (const p of paths) await activeEndpoint(ws, p, 'asset.assigned,vendor.renewal_approaching', 'assets:read,vendors:read');
      rx.received.length = 0;
      const EVENTS = 200;
      const ids: string[] = [];
      await h.services.database.db.transaction().execute(async (trx) => {
        for (let i = 0; i < EVENTS; i++) {
          const e = await emitEvent(
            trx,
            ws,
            'asset.assigned',
            { asset: { id: `ast_${i}`, asset_tag: `AST-${i}`, status: 'ASSIGNED' }, assigned_user_id: 'per_x', expected_return_at: null },
            Date.now(),
          );
          ids.push(e.id);
        }
      });
      // Both workers run the renewal check at start, at the same moment.
      startWorker();
      startWorker();
      await until(
        () => rx.received.filter((r) => r.headers['x-service-event'] === 'asset.assigned').length >= EVENTS * paths.length,
        60_000,
        'all deliveries',
      );
      await until(
        () => rx.received.some((r) => r.headers['x-service-event'] === 'vendor.renewal_approaching'),
        30_000,
        'a renewal warning',
      );
      // Stopped, the workers finish and record what they have in flight: any duplicate has arrived.
      await workers.stopAll('SIGTERM');
      for (const p of paths) {
        const got = rx
          .at(p)
          .filter((r) => r.headers['x-service-event'] === 'asset.assigned')
          .map((r) => JSON.parse(r.body).id as string);
        assert.equal(got.length, EVENTS, `${p} got each event`);
        assert.equal(new Set(got).size, EVENTS, `${p} got no event twice`);
        const renewals = rx
          .at(p)
          .filter((r) => r.headers['x-service-event'] === 'vendor.renewal_approaching')
          .map((r) => JSON.parse(r.body));
        const perVendor = new Map<string, number>();
        for (const r of renewals)
          perVendor.set(
            `${r.data.vendor.id}|${r.data.vendor.renewal_date}`,
            (perVendor.get(`${r.data.vendor.id}|${r.data.vendor.renewal_date}`) ?? 0) + 1,
          );
        assert.ok(perVendor.size > 0);
        for (const [vendor, n] of perVendor) assert.equal(n, 1, `renewal warning for ${vendor} sent once to ${p}`);
      }
      const attempts = await h.services.database.db.selectFrom('delivery_attempts').select('id').where('event_id', 'in', ids).execute();
      assert.equal(attempts.length, EVENTS * paths.length, 'no attempt made twice');
      const notices = await h.services.database.db
        .selectFrom('events')
        .select('id')
        .where('workspace_id', '=', ws)
        .where('type', '=', 'vendor.renewal_approaching')
        .execute();
      const distinct = await h.services.database.db
        .selectFrom('renewal_notices')
        .select('vendor_id')
        .where('workspace_id', '=', ws)
        .execute();
      assert.equal(notices.length, distinct.length, 'one event per vendor and renewal date');
    });
  });
}
