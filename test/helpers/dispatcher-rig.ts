/**
 * The rig the dispatcher's suites share: one harness (webhooks to 127.0.0.1 allowed) and one
 * real receiver per file, dispatchers with a fixed jitter that are stopped when the file ends,
 * and a fresh workspace with one endpoint, verified through the real dispatcher, per test.
 */
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import type { Dialect } from '../../src/store/database.js';
import { Dispatcher, type DispatcherOptions } from '../../src/webhooks/dispatcher.js';
import { createEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { emitEvent } from '../../src/webhooks/events/outbox.js';
import { createHarness, type Harness } from './harness.js';
import { type Received, Receiver } from './receiver.js';

/** The payload of the `asset.assigned` events the rig emits. */
export const ASSIGNED = {
  asset: { id: 'ast_x', asset_tag: 'AST-1', status: 'ASSIGNED' },
  assigned_user_id: 'per_x',
  expected_return_at: null,
};

export interface DispatcherRig {
  readonly h: Harness;
  readonly rx: Receiver;
  /** A dispatcher on the harness's services: the rig's options, then `options`. */
  dispatcher(options?: DispatcherOptions): Dispatcher;
  /** Runs rounds until one finds nothing due. */
  drain(d: Dispatcher): Promise<void>;
  /** A new workspace with one active endpoint for `asset.assigned` at a path of its own. */
  activeEndpoint(): Promise<{ ws: string; id: string; path: string }>;
  /** One `asset.assigned` event of the workspace, committed. */
  emit(ws: string): ReturnType<typeof emitEvent>;
  /** `n` of them in one transaction. */
  emitMany(ws: string, n: number): Promise<void>;
  /** The `asset.assigned` deliveries the receiver got at `path`. */
  eventsAt(path: string): Received[];
}

/** Call inside a `describe`: the harness and receiver are made before its tests and closed after them. */
export function dispatcherRig(dialect: Dialect, name: string, options: DispatcherOptions = {}): DispatcherRig {
  let harness: Harness | undefined;
  let receiver: Receiver | undefined;
  let paths = 0;
  const dispatchers: Dispatcher[] = [];
  before(async () => {
    harness = await createHarness(dialect, { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' });
    receiver = await new Receiver().start();
  });
  after(async () => {
    for (const d of dispatchers) await d.stop();
    await receiver?.stop();
    await harness?.close();
  });
  const rig: DispatcherRig = {
    get h() {
      if (!harness) throw new Error('the dispatcher rig is used before its suite started');
      return harness;
    },
    get rx() {
      if (!receiver) throw new Error('the dispatcher rig is used before its suite started');
      return receiver;
    },
    dispatcher(more = {}) {
      const d = new Dispatcher(rig.h.services, { random: () => 0, ...options, ...more });
      dispatchers.push(d);
      return d;
    },
    async drain(d) {
      for (let n = await d.runOnce(); n > 0; n = await d.runOnce());
    },
    async activeEndpoint() {
      const ws = await rig.h.workspace({ seed: false });
      const path = `/${name}-${++paths}`;
      const ep = await createEndpoint(rig.h.services, ws, { url: rig.rx.url(path), scopes: 'assets:read', events: 'asset.assigned' });
      await rig.drain(rig.dispatcher());
      const row = await rig.h.services.database.db
        .selectFrom('webhook_endpoints')
        .select('status')
        .where('id', '=', ep.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.status, 'active', 'the endpoint was verified');
      return { ws, id: ep.id, path };
    },
    emit(ws) {
      return rig.h.services.database.db.transaction().execute((trx) => emitEvent(trx, ws, 'asset.assigned', ASSIGNED, rig.h.clock()));
    },
    async emitMany(ws, n) {
      await rig.h.services.database.db.transaction().execute(async (trx) => {
        for (let i = 0; i < n; i++) await emitEvent(trx, ws, 'asset.assigned', ASSIGNED, rig.h.clock());
      });
    },
    eventsAt(path) {
      return rig.rx.at(path).filter((r) => r.headers['x-service-event'] === 'asset.assigned');
    },
  };
  return rig;
}
