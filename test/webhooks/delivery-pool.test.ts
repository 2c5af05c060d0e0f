/**
 * The delivery loop's own sessions (ADR 42): on PostgreSQL the dispatcher claims and records on a
 * pool of its own, so request transactions holding every session of the main pool (64 domain
 * actions in flight in one `wsops serve`) do not hold deliveries back. SQLite has one writer
 * connection, shared by design.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { POOL_SESSIONS } from '../../src/store/dialects/postgres.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { emitEvent } from '../../src/webhooks/events/outbox.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { Receiver } from '../helpers/receiver.js';

for (const dialect of DIALECTS) {
  describe(`the delivery loop's sessions [${dialect}]`, { skip: dialect === 'sqlite' && 'SQLite: one writer connection by design' }, () => {
    let h: Harness;
    let rx: Receiver;
    let dispatcher: Dispatcher;
    before(async () => {
      h = await createHarness(dialect, { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' });
      rx = await new Receiver().start();
      dispatcher = new Dispatcher(h.services, { random: () => 0 });
    });
    after(async () => {
      await dispatcher?.stop();
      await rx?.stop();
      await h?.close();
    });

    // A failure here is a hang: the claim waits for a main-pool session that never frees.
    it('delivers an event while request transactions hold every session of the main pool', { timeout: 120_000 }, async () => {
      const ws = await h.workspace({ seed: false });
      await createEndpoint(h.services, ws, { url: rx.url('/busy'), scopes: 'assets:read', events: 'asset.assigned' });
      while ((await dispatcher.runOnce()) > 0); // the verification
      const data = { asset: { id: 'ast_x', asset_tag: 'AST-1', status: 'ASSIGNED' }, assigned_user_id: 'per_x', expected_return_at: null };
      await h.services.database.db.transaction().execute((trx) => emitEvent(trx, ws, 'asset.assigned', data, h.clock()));

      let release: () => void = () => {};
      const gate = new Promise<void>((r) => {
        release = r;
      });
      let holding = 0;
      const held = Array.from({ length: POOL_SESSIONS }, () =>
        h.services.database.db.transaction().execute(async (trx) => {
          await trx.selectFrom('workspaces').select('id').where('id', '=', ws).execute();
          holding++;
          await gate;
        }),
      );
      try {
        while (holding < POOL_SESSIONS) await new Promise((r) => setImmediate(r));
        assert.equal(await dispatcher.runOnce(), 1);
        assert.equal(rx.received.filter((r) => r.path === '/busy').length, 2);
      } finally {
        release();
        await Promise.all(held);
      }
    });
  });
}
