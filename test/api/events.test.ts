/**
 * The events API (CONTRACT "Events API"), read through HTTP with every response checked against
 * the served OpenAPI document (h.get): oldest first, exactly the stored bodies, `types` and
 * `since` exact over 10,000 events, the signed cursor bound to the filters, scope filtering,
 * `endpoint.verification` never listed, the retention; and a receiver down for a burst that
 * catches up through `client.events.list` (a real listener, the real dispatcher) with nothing
 * missed and nothing applied twice.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { WsopsClient } from '@wsops/client';
import { newId } from '../../src/ids.js';
import { READ_SCOPES } from '../../src/registers/catalogue.js';
import { insertBatches } from '../../src/store/insert-batches.js';
import type { DB } from '../../src/store/schema.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { pruneDeliveryHistory } from '../../src/webhooks/queue/retention.js';
import { assetEvents } from '../helpers/asset-events.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { Receiver } from '../helpers/receiver.js';

const DATA = {
  'asset.assigned': {
    asset: { id: 'ast_a1', asset_tag: 'AST-1', status: 'ASSIGNED' },
    assigned_user_id: 'per_p1',
    expected_return_at: null,
  },
  'asset.returned': {
    asset: { id: 'ast_a1', asset_tag: 'AST-1', status: 'AVAILABLE' },
    returned_from_user_id: 'per_p1',
    returned_at: '2026-12-01T10:00:00.000Z',
  },
  'vendor.renewal_approaching': {
    vendor: {
      id: 'ven_v1',
      name: 'Vendor',
      renewal_date: '2027-01-31',
      notice_period_days: 30,
      cancellation_deadline: '2027-01-01',
      auto_renews: true,
    },
  },
  'endpoint.verification': { endpoint_id: 'we_e1', challenge: 'c' },
} as const;
type Type = keyof typeof DATA;
const CYCLE: Type[] = ['asset.assigned', 'vendor.renewal_approaching', 'asset.returned', 'asset.assigned', 'endpoint.verification'];
const DAY = 86_400_000;

/** An event row as the outbox writes it (outbox.ts body()), at `at`. */
function row(workspaceId: string, type: Type, at: number): DB['events'] {
  const id = newId('evt');
  const created = new Date(at).toISOString();
  return {
    id,
    workspace_id: workspaceId,
    type,
    created_at: created,
    body: JSON.stringify({ id, type, created, api_version: '1', data: DATA[type] }),
  };
}

for (const dialect of DIALECTS) {
  describe(`events API [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    /** The 10,000 listable events, in the API's order. */
    let listable: DB['events'][];
    let all: string;

    before(async () => {
      h = await createHarness(dialect, { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' });
      ws = await h.workspace({ seed: false });
      const other = await h.workspace({ seed: false });
      const start = h.clock() - 20 * DAY;
      const rows: DB['events'][] = [];
      // Pairs share a millisecond: the order's tie-break on id is exercised.
      for (let i = 0; rows.filter((r) => r.type !== 'endpoint.verification').length < 10_000; i++) {
        rows.push(row(ws, CYCLE[i % CYCLE.length] as Type, start + Math.floor(i / 2) * 60_000));
      }
      const foreign = Array.from({ length: 50 }, (_, i) => row(other, 'asset.assigned', start + i * 60_000));
      await insertBatches(h.services.database.db, 'events', [...rows, ...foreign]);
      listable = rows
        .filter((r) => r.type !== 'endpoint.verification')
        .sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1));
      all = (await h.key(ws, READ_SCOPES)).key;
    });
    after(async () => {
      await h.close();
    });

    /** Every page of a walk through HTTP (each response validated), and the cursors it used. */
    const walk = async (key: string, query: string) => {
      const items: { id: string; type: string; created: string }[] = [];
      let url = `/api/v1/events?${query}`;
      for (;;) {
        const res = await h.get(url, key);
        assert.equal(res.status, 200, res.body);
        items.push(...res.json.data);
        assert.equal(res.json.next_cursor === null, !res.json.has_more);
        if (!res.json.has_more) return items;
        url = `/api/v1/events?${query}${query ? '&' : ''}cursor=${encodeURIComponent(res.json.next_cursor)}`;
      }
    };

    it('lists every event oldest first, each exactly its stored webhook body; paging is exact over 10,000 events; verification events never listed', async () => {
      const items = await walk(all, 'limit=1000');
      assert.equal(items.length, 10_000);
      assert.deepEqual(
        items.map((e) => e.id),
        listable.map((e) => e.id),
      );
      const first = await h.get('/api/v1/events?limit=3', all);
      assert.equal(
        first.body,
        `{"data":[${listable
          .slice(0, 3)
          .map((e) => e.body)
          .join(',')}],"has_more":true,"next_cursor":${JSON.stringify(first.json.next_cursor)}}`,
      );
      const detail = await h.get(`/api/v1/events/${listable[5]?.id}`, all);
      assert.equal(detail.status, 200);
      assert.equal(detail.body, listable[5]?.body, 'the detail is the same object as in the list');
      const verification = (
        await h.services.database.db
          .selectFrom('events')
          .select('id')
          .where('workspace_id', '=', ws)
          .where('type', '=', 'endpoint.verification')
          .executeTakeFirstOrThrow()
      ).id;
      assert.equal((await h.get(`/api/v1/events/${verification}`, all)).status, 404);
    });

    it('filters by types and since exactly, across pages of varying limit', async () => {
      const since = listable[4321]?.created_at as string;
      const expected = listable.filter(
        (e) => e.created_at >= since && (e.type === 'vendor.renewal_approaching' || e.type === 'asset.returned'),
      );
      const items = await walk(all, `types=vendor.renewal_approaching,asset.returned&since=${encodeURIComponent(since)}&limit=333`);
      assert.deepEqual(
        items.map((e) => e.id),
        expected.map((e) => e.id),
      );
      assert.ok(expected.length > 2000);
      // since with an offset is the same instant.
      const offset = new Date(Date.parse(since)).toISOString().replace('Z', '+00:00');
      const same = await h.get(
        `/api/v1/events?types=asset.returned,vendor.renewal_approaching&since=${encodeURIComponent(offset)}&limit=5`,
        all,
      );
      assert.deepEqual(
        same.json.data.map((e: { id: string }) => e.id),
        expected.slice(0, 5).map((e) => e.id),
      );
    });

    it('a key sees only the types whose read scope it holds; 404 for an event it may not see, or of another workspace', async () => {
      const vendorsOnly = (await h.key(ws, ['vendors:read'])).key;
      const items = await walk(vendorsOnly, 'limit=1000');
      assert.deepEqual(
        items.map((e) => e.id),
        listable.filter((e) => e.type === 'vendor.renewal_approaching').map((e) => e.id),
      );
      const asked = await h.get('/api/v1/events?types=asset.assigned', vendorsOnly);
      assert.equal(asked.status, 200);
      assert.deepEqual(asked.json, { data: [], has_more: false, next_cursor: null });
      const asset = listable.find((e) => e.type === 'asset.assigned');
      const res = await h.get(`/api/v1/events/${asset?.id}`, vendorsOnly);
      assert.equal(res.status, 404);
      assert.equal(res.json.code, 'not_found');
      const foreign = await h.services.database.db
        .selectFrom('events')
        .select('id')
        .where('workspace_id', '!=', ws)
        .executeTakeFirstOrThrow();
      assert.equal((await h.get(`/api/v1/events/${foreign.id}`, all)).status, 404);
      assert.equal((await h.get('/api/v1/events/not-an-id', all)).status, 404);
      const noScopes = (await h.key(ws, ['people:read'])).key;
      assert.deepEqual((await h.get('/api/v1/events', noScopes)).json, { data: [], has_more: false, next_cursor: null });
    });

    it("the registers' problems: unknown type names the allowed set; bad since, limit, unknown parameter; cursor bound to the filters", async () => {
      const unknown = await h.get('/api/v1/events?types=asset.assigned,asset.stolen', all);
      assert.equal(unknown.status, 400);
      assert.equal(unknown.json.code, 'invalid_parameter');
      assert.equal(unknown.json.param, 'types');
      assert.match(unknown.json.detail, /asset\.stolen.*asset\.assigned, asset\.returned, vendor\.renewal_approaching/);
      const verification = await h.get('/api/v1/events?types=endpoint.verification', all);
      assert.equal(verification.status, 400);
      assert.equal((await h.get('/api/v1/events?since=yesterday', all)).json.param, 'since');
      assert.equal((await h.get('/api/v1/events?limit=0', all)).json.param, 'limit');
      assert.equal((await h.get('/api/v1/events?updated_since=2026-01-01T00:00:00Z', all)).json.code, 'unknown_parameter');
      const page = await h.get('/api/v1/events?types=asset.assigned&limit=2', all);
      const cursor = encodeURIComponent(page.json.next_cursor);
      const changed = await h.get(`/api/v1/events?types=asset.returned&cursor=${cursor}`, all);
      assert.equal(changed.json.code, 'cursor_filters_mismatch');
      const dropped = await h.get(`/api/v1/events?cursor=${cursor}`, all);
      assert.equal(dropped.json.code, 'cursor_filters_mismatch');
      const onList = await h.get(`/api/v1/assets?cursor=${cursor}`, all);
      assert.equal(onList.json.code, 'invalid_cursor');
    });

    it('events older than WSOPS_EVENT_RETENTION_DAYS: a since or cursor before it is 400 events_beyond_retention; the retention job prunes them', async () => {
      assert.equal(h.services.config.eventRetentionDays, 30);
      const old = await h.get(`/api/v1/events?since=${encodeURIComponent(new Date(h.clock() - 31 * DAY).toISOString())}`, all);
      assert.equal(old.status, 400);
      assert.equal(old.json.code, 'events_beyond_retention');
      assert.equal(old.json.param, 'since');
      // The oldest events are 20 days old: 10 days on less an hour, a walk starts at the horizon's edge
      // and stalls for two hours (its cursor still fresh): its position has fallen behind the horizon.
      h.clock.advance(10 * DAY - 3600_000);
      const page = await h.get('/api/v1/events?limit=10', all);
      assert.equal(page.json.data[0].id, listable[0]?.id);
      h.clock.advance(2 * 3600_000);
      const stale = await h.get(`/api/v1/events?cursor=${encodeURIComponent(page.json.next_cursor)}`, all);
      assert.equal(stale.status, 400);
      assert.equal(stale.json.code, 'events_beyond_retention');
      assert.equal(stale.json.param, 'cursor');
      const horizon = new Date(h.clock() - 30 * DAY).toISOString();
      const kept = listable.filter((e) => e.created_at >= horizon);
      const items = await walk(all, 'limit=1000');
      assert.deepEqual(
        items.map((e) => e.id),
        kept.map((e) => e.id),
        'never served past the horizon, pruned yet or not',
      );
      const pruned = await pruneDeliveryHistory(h.services);
      assert.ok(pruned.events >= listable.length - kept.length);
      const left = await h.services.database.db
        .selectFrom('events')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('workspace_id', '=', ws)
        .where('created_at', '<', horizon)
        .executeTakeFirstOrThrow();
      assert.equal(Number(left.n), 0);
    });

    it('a receiver down for a burst catches up through client.events.list: no event missed, none applied twice', async () => {
      const live = await h.workspace();
      const key = (await h.key(live, ['assets:read'])).key;
      await h.app.listen({ port: 0, host: '127.0.0.1' });
      const client = new WsopsClient({ apiKey: key, baseUrl: `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}` });
      const rx = await new Receiver().start();
      const dispatcher = new Dispatcher(h.services, { random: () => 0 });
      try {
        // The consumer: applies each event once by its id, and remembers the last one's `created`.
        const applied = new Map<string, number>();
        let lastCreated = '';
        const apply = (event: { id: string; created: string }) => {
          if (applied.has(event.id)) return false;
          applied.set(event.id, 1);
          if (event.created > lastCreated) lastCreated = event.created;
          return true;
        };
        let up = true;
        let duplicatesSkipped = 0;
        rx.on('/consumer', (_req, res, body) => {
          if (!up) return void res.writeHead(503).end('down');
          const event = JSON.parse(body) as { id: string; type: string; created: string };
          if (event.type !== 'endpoint.verification' && !apply(event)) duplicatesSkipped++;
          res.writeHead(200).end('ok');
        });
        await createEndpoint(h.services, live, {
          url: rx.url('/consumer'),
          scopes: 'assets:read',
          events: 'asset.assigned asset.returned',
        });
        const drain = async () => {
          for (let n = await dispatcher.runOnce(); n > 0; n = await dispatcher.runOnce());
        };
        await drain();
        const { raise: raiseEvent, assetId } = await assetEvents(h, live);
        const raised: string[] = [];
        const raise = async () => {
          raised.push(await raiseEvent());
        };
        for (let i = 0; i < 4; i++) await raise();
        await drain();
        assert.equal(applied.size, 4);

        // The burst, while the receiver is down.
        up = false;
        for (let i = 0; i < 15; i++) await raise();
        await drain();
        assert.equal(applied.size, 4, 'nothing of the burst reached the consumer');

        // Catch up: from the last applied, less a few minutes; the id decides what is new.
        up = true;
        const since = new Date(Date.parse(lastCreated) - 5 * 60_000);
        let listed = 0;
        for await (const event of client.events.list({ since, types: ['asset.assigned', 'asset.returned'] })) {
          listed++;
          if (!apply(event)) duplicatesSkipped++;
        }
        assert.equal(listed, raised.length, 'the list holds every event since then, the ones already applied too');
        assert.deepEqual([...applied.keys()].sort(), [...raised].sort(), 'no event missed');

        // The webhook retries of the burst arrive after the catch-up: each is skipped by its id.
        h.clock.advance(10 * 60_000);
        await drain();
        assert.deepEqual([...applied.keys()].sort(), [...raised].sort());
        assert.ok(
          [...applied.values()].every((n) => n === 1),
          'none applied twice',
        );
        assert.ok(duplicatesSkipped >= 15 + 4, `the retries and the already-applied listed ones were skipped (${duplicatesSkipped})`);

        const one = await client.events.get(raised[0] as string);
        assert.equal(one.id, raised[0]);
        if (one.type === 'asset.assigned') assert.equal(one.data.asset.id, assetId);
      } finally {
        await dispatcher.stop();
        await rx.stop();
      }
    });
  });
}
