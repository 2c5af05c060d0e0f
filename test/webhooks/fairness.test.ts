/**
 * Fairness across workspaces and endpoints (issue 26): one workspace's backlog at a slow or
 * hanging receiver never delays another workspace's event, and one endpoint never has more
 * requests open than its cap, however many workers share the database.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import type { ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT, Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint, disableEndpoint } from '../../src/webhooks/endpoints.js';
import { emitEvent } from '../../src/webhooks/outbox.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness, TEST_SECRET } from '../helpers/harness.js';
import { answer, Receiver } from '../helpers/receiver.js';

const ASSIGNED = { asset: { id: 'ast_x', asset_tag: 'AST-1', status: 'ASSIGNED' }, assigned_user_id: 'per_x', expected_return_at: null };
const BACKLOG = 2000;
const BIN = new URL('../../bin/wsops', import.meta.url).pathname;

async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

for (const dialect of DIALECTS) {
  describe(`fair delivery across workspaces [${dialect}]`, () => {
    let h: Harness;
    let rx: Receiver;
    let path = 0;
    const dispatchers: Dispatcher[] = [];
    const dispatcher = () => {
      const d = new Dispatcher(h.services, { random: () => 0, pollMs: 1, maxIdleMs: 20 });
      dispatchers.push(d);
      return d;
    };

    before(async () => {
      h = await createHarness(dialect, { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' });
      rx = await new Receiver().start();
    });
    after(async () => {
      for (const d of dispatchers) await d.stop();
      await rx.stop();
      await h.close();
    });

    const db = () => h.services.database.db;
    /** A new workspace with one active endpoint (verified through the real dispatcher). */
    const activeEndpoint = async () => {
      const ws = await h.workspace({ seed: false });
      const p = `/fair-${++path}`;
      const ep = await createEndpoint(h.services, ws, { url: rx.url(p), scopes: 'assets:read', events: 'asset.assigned' });
      const d = dispatcher();
      while ((await d.runOnce()) > 0);
      return { ws, id: ep.id, path: p };
    };
    const emitMany = (ws: string, n: number) =>
      db()
        .transaction()
        .execute(async (trx) => {
          for (let i = 0; i < n; i++) await emitEvent(trx, ws, 'asset.assigned', ASSIGNED, h.clock());
        });
    const pendingOf = async (endpointId: string) =>
      (await db().selectFrom('delivery_jobs').select('id').where('endpoint_id', '=', endpointId).where('state', '=', 'pending').execute())
        .length;
    const eventsAt = (p: string) => rx.at(p).filter((r) => r.headers['x-service-event'] === 'asset.assigned');

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

    it("B's single event is delivered at once while A's thousands of deliveries hang at A's receiver", async () => {
      const a = await activeEndpoint();
      const b = await activeEndpoint();
      const hang = hanging(a.path);
      rx.on(b.path, answer(200));
      await emitMany(a.ws, BACKLOG);
      h.clock.advance(1);
      const d = dispatcher();
      d.start();
      await until(() => hang.held.length >= DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT, 10_000, "A's receiver to be saturated");
      const started = Date.now();
      await emitMany(b.ws, 1);
      d.wake();
      await until(() => eventsAt(b.path).length === 1, 5_000, "B's event");
      const took = Date.now() - started;
      assert.ok(took < 2000, `B was delivered ${took} ms after its commit`);
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
      await until(() => eventsAt(a.path).length >= 48, 10_000, "A's first rounds");
      const started = Date.now();
      await emitMany(b.ws, 1);
      d.wake();
      await until(() => aBeforeB >= 0, 10_000, "B's event");
      const took = Date.now() - started;
      await d.stop();
      assert.ok(took < 2000, `B was delivered ${took} ms after its commit (A had ${aBeforeB} of ${BACKLOG})`);
      assert.ok(most <= DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT, `at most the cap open at A (saw ${most})`);
      assert.ok((await pendingOf(a.id)) > BACKLOG / 2, "A's backlog is still mostly undelivered");
      await disableEndpoint(h.services, a.ws, a.id);
      await disableEndpoint(h.services, b.ws, b.id);
    });

    it('two workers on one database: the cap on requests open at one endpoint holds across both, and B is delivered while A hangs', async () => {
      const a = await activeEndpoint();
      const b = await activeEndpoint();
      const hang = hanging(a.path);
      rx.on(b.path, answer(200));
      await emitMany(a.ws, BACKLOG);
      h.clock.advance(1);
      const workers = [dispatcher(), dispatcher()];
      for (const w of workers) w.start();
      await until(() => hang.held.length >= DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT, 10_000, "A's receiver to be saturated");
      await new Promise((r) => setTimeout(r, 300)); // both workers keep claiming meanwhile
      assert.equal(hang.held.length, DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT, 'both workers together keep to the cap');
      const started = Date.now();
      await emitMany(b.ws, 1);
      for (const w of workers) w.wake();
      await until(() => eventsAt(b.path).length === 1, 5_000, "B's event");
      assert.ok(Date.now() - started < 2000, `B was delivered ${Date.now() - started} ms after its commit`);
      // A's receiver answers again (every 20 ms): the backlog flows, still at most the cap at once across both workers.
      const answering = setInterval(hang.release, 20);
      await until(() => hang.received() >= 200, 30_000, 'more of A');
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
      rx.on(b.path, answer(200));
      await emitMany(a.ws, BACKLOG);
      const children: ChildProcess[] = [];
      for (let i = 0; i < 2; i++)
        children.push(
          spawn(process.execPath, [BIN, 'serve', '--only', 'worker'], {
            env: {
              ...process.env,
              WSOPS_DATABASE_URL: h.databaseUrl,
              WSOPS_SECRET: TEST_SECRET,
              WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true',
              WSOPS_DEMO: 'false',
              WSOPS_LOG_LEVEL: 'error',
            },
            stdio: ['ignore', 'ignore', 'inherit'],
          }),
        );
      try {
        await until(() => hang.held.length >= DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT, 30_000, "A's receiver to be saturated");
        await new Promise((r) => setTimeout(r, 1000)); // both processes keep claiming meanwhile
        assert.equal(hang.held.length, DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT, 'both processes together keep to the cap');
        const started = Date.now();
        await db()
          .transaction()
          .execute((trx) => emitEvent(trx, b.ws, 'asset.assigned', ASSIGNED, Date.now()));
        await until(() => eventsAt(b.path).length === 1, 5_000, "B's event");
        assert.ok(Date.now() - started < 2000, `B was delivered ${Date.now() - started} ms after its commit`);
      } finally {
        for (const c of children) {
          const exited = new Promise((r) => c.once('exit', r));
          c.kill('SIGKILL');
          await exited;
        }
        hang.release();
      }
      await disableEndpoint(h.services, a.ws, a.id);
      await disableEndpoint(h.services, b.ws, b.id);
    });
  });
}
