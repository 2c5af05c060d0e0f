/**
 * Event content filters (issue 61, docs/guide/filters.md): the language's semantics as a table;
 * invalid filters refused with the reason by every way in (the domain, the CLI as a real process,
 * the internal API over a real socket, the console form); and, with a real receiver on 127.0.0.1
 * and the real dispatcher, domain actions whose events match a filter delivered and the others
 * neither delivered, nor in the delivery history, nor counted as failures. The console's "test
 * this filter against a recent event". An injected clock, no sleeps.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { runAction } from '../../src/actions/domain/index.js';
import { listAudit } from '../../src/audit/audit.js';
import { AppError } from '../../src/errors.js';
import { buildInternalApp } from '../../src/http/internal-app.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { setEndpointFilter } from '../../src/webhooks/endpoints/endpoint-filters.js';
import { createEndpoint, disableEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { compileFilter, MAX_FILTER_BYTES, parseFilter } from '../../src/webhooks/events/event-filter.js';
import { emitEvent } from '../../src/webhooks/events/outbox.js';
import { listDeliveries, sendTestEvent } from '../../src/webhooks/queue/deliveries.js';
import { type SignedInAdmin, signedInAdmin } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness, TEST_SECRET } from '../helpers/harness.js';
import { BIN } from '../helpers/processes.js';
import { Receiver } from '../helpers/receiver.js';

const TOKEN = 'op-token-0123456789abcdef-0123456789abcdef';

/** A webhook body as the outbox writes it. */
const body = {
  id: 'evt_1',
  type: 'purchase_request.decided',
  created: '2026-12-07T10:00:00.000Z',
  api_version: '1',
  data: {
    purchase_request: { id: 'prq_1', title: 'Laptops', status: 'APPROVED', amount_minor: 250000, currency: 'EUR', decided_at: null },
    returned_asset_ids: ['ast_1', 'ast_2'],
    lines: [
      { sku: 'A', qty: 2 },
      { sku: 'B', qty: 5 },
    ],
  },
};

/** [filter, matches body?, the failed clause when not] */
const SEMANTICS: [string, unknown, boolean, string?][] = [
  ['nested equality', { data: { purchase_request: { status: 'APPROVED' } } }, true],
  ['nested equality, other value', { data: { purchase_request: { status: 'REJECTED' } } }, false, 'data.purchase_request.status'],
  ['top-level field', { type: 'purchase_request.decided' }, true],
  ['$eq', { data: { purchase_request: { currency: { $eq: 'EUR' } } } }, true],
  ['$neq', { data: { purchase_request: { currency: { $neq: 'EUR' } } } }, false, 'data.purchase_request.currency.$neq'],
  ['$gt above', { data: { purchase_request: { amount_minor: { $gt: 100000 } } } }, true],
  ['$gt equal', { data: { purchase_request: { amount_minor: { $gt: 250000 } } } }, false, 'data.purchase_request.amount_minor.$gt'],
  ['$gte equal', { data: { purchase_request: { amount_minor: { $gte: 250000 } } } }, true],
  ['$lt', { data: { purchase_request: { amount_minor: { $lt: 250000 } } } }, false, 'data.purchase_request.amount_minor.$lt'],
  ['$lte', { data: { purchase_request: { amount_minor: { $lte: 250000 } } } }, true],
  ['range ($gte and $lt)', { data: { purchase_request: { amount_minor: { $gte: 1000, $lt: 300000 } } } }, true],
  ['strings compare in order (RFC 3339)', { created: { $gte: '2026-12-01T00:00:00Z' } }, true],
  ['$in', { data: { purchase_request: { status: { $in: ['APPROVED', 'REJECTED'] } } } }, true],
  ['$nin', { data: { purchase_request: { status: { $nin: ['APPROVED'] } } } }, false, 'data.purchase_request.status.$nin'],
  ['$exist true', { data: { purchase_request: { decided_at: { $exist: true } } } }, true],
  ['$exist false on a present null', { data: { purchase_request: { decided_at: { $exist: false } } } }, false],
  ['$exist false on a missing field', { data: { purchase_request: { location_id: { $exist: false } } } }, true],
  ['null equals null', { data: { purchase_request: { decided_at: null } } }, true],
  ['missing field: equality fails', { data: { purchase_request: { location_id: 'loc_1' } } }, false, 'data.purchase_request.location_id'],
  ['missing field: $gt fails', { data: { asset: { value: { $gt: 1 } } } }, false, 'data.asset'],
  ['missing field: $neq holds', { data: { purchase_request: { location_id: { $neq: 'loc_1' } } } }, true],
  ['missing field: $nin holds', { data: { purchase_request: { location_id: { $nin: ['loc_1'] } } } }, true],
  ['type mismatch: no coercion in equality', { data: { purchase_request: { amount_minor: '250000' } } }, false],
  ['type mismatch: a string never compares with a number', { data: { purchase_request: { amount_minor: { $gt: '1' } } } }, false],
  ['type mismatch: a nested match on a string', { data: { purchase_request: { title: { x: 1 } } } }, false],
  ['array: an element equals', { data: { returned_asset_ids: 'ast_2' } }, true],
  ['array: no element equals', { data: { returned_asset_ids: 'ast_3' } }, false, 'data.returned_asset_ids'],
  ['array: $in on elements', { data: { returned_asset_ids: { $in: ['ast_9', 'ast_1'] } } }, true],
  ['array: $neq holds only when no element equals', { data: { returned_asset_ids: { $neq: 'ast_1' } } }, false],
  ['array of objects: one element matches all', { data: { lines: { sku: 'B', qty: { $gt: 3 } } } }, true],
  ['array of objects: no single element matches all', { data: { lines: { sku: 'A', qty: { $gt: 3 } } } }, false, 'data.lines'],
  ['$or: one holds', { $or: [{ type: 'asset.assigned' }, { data: { purchase_request: { amount_minor: { $gt: 1 } } } }] }, true],
  ['$or: none holds', { $or: [{ type: 'asset.assigned' }, { type: 'asset.returned' }] }, false, '$or'],
  ['$and', { $and: [{ type: 'purchase_request.decided' }, { data: { purchase_request: { status: 'REJECTED' } } }] }, false],
  ['$or nested in a level', { data: { purchase_request: { $or: [{ status: 'REJECTED' }, { currency: 'EUR' }] } } }, true],
  ['several fields: all must hold', { type: 'purchase_request.decided', data: { purchase_request: { currency: 'USD' } } }, false],
];

/** [filter as given, what the refusal must say] */
const REFUSED: [string, unknown, RegExp][] = [
  ['not JSON', '{"data": ', /invalid filter at filter: not JSON/],
  ['not an object', '[1]', /must be a JSON object, not an array/],
  ['empty', '{}', /an empty filter matches every event; clear the filter instead/],
  [
    'unknown operator',
    { data: { amount: { $regex: '^a' } } },
    /at filter\.data\.amount\.\$regex: unknown operator \$regex; the operators are \$eq \$neq/,
  ],
  ['unknown top operator', { $not: [{ type: 'x' }] }, /unknown operator \$not; the operators are/],
  ['field operator at a level', { $gt: 1 }, /\$gt compares a field's value: put it inside the field/],
  ['mixed operators and fields', { data: { amount: { $gt: 1, currency: 'EUR' } } }, /operators and field names are not mixed/],
  ['$gt on an object', { data: { amount: { $gt: { a: 1 } } } }, /at filter\.data\.amount\.\$gt: \$gt takes a number or a string/],
  ['$in not an array', { data: { status: { $in: 'A' } } }, /\$in takes an array of 1 to 100/],
  ['$exist not a boolean', { data: { status: { $exist: 1 } } }, /\$exist takes true or false/],
  ['$or not an array', { $or: { type: 'a' } }, /\$or takes a non-empty array of filters/],
  ['$and empty', { $and: [] }, /\$and takes a non-empty array of filters/],
  ['an array as a value', { data: { ids: ['a'] } }, /an array is not a value to match; use \{"\$in"/],
  ['a dotted name', { 'data.amount': 1 }, /a field name with a dot; nest objects instead: \{"data": \{"amount"/],
  [
    '__proto__',
    '{"data": {"__proto__": {"x": 1}}}',
    /at filter\.data\.__proto__: a key naming __proto__, constructor or prototype is never accepted/,
  ],
  ['constructor (any case)', { data: { Constructor: 1 } }, /filter\.data\.Constructor: a key naming __proto__/],
  ['too deep', { a: { b: { c: { d: { e: { f: { g: { h: { i: 1 } } } } } } } } }, /nested deeper than 8 levels/],
  ['too long', { data: { title: 'x'.repeat(MAX_FILTER_BYTES) } }, /longer than 4096 bytes/],
];

describe('event filter language', () => {
  for (const [name, filter, matched, clause] of SEMANTICS) {
    it(`${name}: ${matched ? 'matches' : 'does not match'}`, () => {
      const compiled = compileFilter(parseFilter(filter));
      assert.ok(compiled, 'compiled');
      const failed = compiled.failure(body);
      assert.equal(failed === undefined, matched, `failed clause: ${failed}`);
      if (clause) assert.equal(failed, clause);
    });
  }
  for (const [name, filter, reason] of REFUSED) {
    it(`refuses ${name}, naming the path and the problem`, () => {
      assert.throws(
        () => parseFilter(filter),
        (err: unknown) =>
          err instanceof AppError && err.code === 'invalid_parameter' && err.extra.param === 'filter' && reason.test(err.message),
      );
    });
  }
  it('no filter (null, empty text) is stored as null; a filter is stored as canonical JSON', () => {
    assert.equal(parseFilter(null), null);
    assert.equal(parseFilter('  '), null);
    assert.equal(parseFilter('{ "type" : "asset.assigned" }'), '{"type":"asset.assigned"}');
  });
});

for (const dialect of DIALECTS) {
  describe(`event filters on endpoints [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    let rx: Receiver;
    let dispatcher: Dispatcher;
    let internal: FastifyInstance;
    let internalUrl: string;
    let admin: SignedInAdmin;
    let path = 0;

    before(async () => {
      h = await createHarness(dialect, { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true', WSOPS_OPERATOR_TOKEN: TOKEN });
      internal = buildInternalApp(h.services);
      internalUrl = await internal.listen({ port: 0, host: '127.0.0.1' });
      ws = await h.workspace();
      admin = await signedInAdmin(h, ws);
      rx = await new Receiver().start();
      dispatcher = new Dispatcher(h.services, { random: () => 0 });
    });
    after(async () => {
      await dispatcher.stop();
      await internal.close();
      await rx.stop();
      await h.close();
    });

    const drain = async () => {
      for (let n = await dispatcher.runOnce(); n > 0; n = await dispatcher.runOnce());
    };
    const freeSlots = async () => {
      const open = await h.services.database.db
        .selectFrom('webhook_endpoints')
        .select('id')
        .where('workspace_id', '=', ws)
        .where('status', '!=', 'disabled')
        .execute();
      for (const e of open) await disableEndpoint(h.services, ws, e.id);
    };
    /** A verified endpoint for purchase_request.decided, with `filter`; the event ids its receiver got. */
    const newEndpoint = async (filter?: unknown) => {
      const p = `/filtered-${++path}`;
      const got: string[] = [];
      rx.on(p, (_req, res, text) => {
        const b = JSON.parse(text) as { id: string; type: string };
        if (b.type !== 'endpoint.verification') got.push(b.id);
        res.writeHead(200).end('ok');
      });
      const ep = await createEndpoint(h.services, ws, {
        url: rx.url(p),
        scopes: 'approvals:read',
        events: 'purchase_request.decided',
        filter,
      });
      await drain();
      return { ...ep, got };
    };
    const submitted = async () => {
      const rows = await h.services.database.db
        .selectFrom('records')
        .select('doc')
        .where('workspace_id', '=', ws)
        .where('register', '=', 'purchase-requests')
        .execute();
      return rows
        .map((r) => JSON.parse(r.doc) as { id: string; status: string; amount_minor: number; current_approver_id: string | null })
        .filter((r) => r.status === 'SUBMITTED' && r.current_approver_id);
    };

    it('domain actions: exactly the events matching the filter are delivered; the others get no delivery, no history, no failure', async () => {
      const requests = (await submitted()).slice(0, 6);
      // (node's assert, given no message, re-reads the source to write one: slow under tsx, so every check here says what it checks)
      assert.ok(requests.length >= 4, `the demo data has submitted purchase requests (${requests.length})`);
      const amounts = requests.map((r) => r.amount_minor).sort((a, b) => a - b);
      const threshold = amounts[Math.floor(amounts.length / 2) - 1] as number;
      await freeSlots();
      const filtered = await newEndpoint(JSON.stringify({ data: { purchase_request: { amount_minor: { $gt: threshold } } } }));
      assert.deepEqual(filtered.filter, { data: { purchase_request: { amount_minor: { $gt: threshold } } } });
      const all = await newEndpoint();
      const above = new Set<string>();
      const raised: string[] = [];
      for (const r of requests) {
        h.clock.advance(1000);
        const result = await runAction(h.services, 'purchase_request.decide', ws, { request: r.id, decision: 'reject' });
        const id = result.events[0] as string;
        raised.push(id);
        if (r.amount_minor > threshold) above.add(id);
      }
      assert.ok(above.size > 0 && above.size < raised.length, 'some match and some do not');
      await drain();
      assert.deepEqual([...filtered.got].sort(), [...above].sort(), 'exactly the matching events are delivered');
      assert.deepEqual([...all.got].sort(), [...raised].sort(), 'an endpoint without a filter gets every one');
      const history = await listDeliveries(h.services, ws, filtered.id, { limit: 100 });
      const listed = history.deliveries.filter((d) => d.event_type === 'purchase_request.decided').map((d) => d.event_id);
      assert.deepEqual(listed.sort(), [...above].sort(), 'the others are not in its delivery history');
      const row = await h.services.database.db
        .selectFrom('webhook_endpoints')
        .select(['status', 'consecutive_failures'])
        .where('id', '=', filtered.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(row, { status: 'active', consecutive_failures: 0 }, 'not counted as failures');
      const jobs = await h.services.database.db
        .selectFrom('delivery_jobs')
        .select('event_id')
        .where('endpoint_id', '=', filtered.id)
        .execute();
      assert.ok(!jobs.some((j) => raised.includes(j.event_id) && !above.has(j.event_id)), 'no job written for a non-matching event');
    });

    it('the outbox path filters too; verification and test events ignore the filter; a change applies to the next event', async () => {
      await freeSlots();
      const ep = await newEndpoint({ data: { purchase_request: { currency: 'USD' } } });
      assert.equal(
        (await h.services.database.db.selectFrom('webhook_endpoints').select('status').where('id', '=', ep.id).executeTakeFirstOrThrow())
          .status,
        'active',
        'verified despite the filter',
      );
      const emit = (currency: string) =>
        h.services.database.db.transaction().execute((trx) =>
          emitEvent(
            trx,
            ws,
            'purchase_request.decided',
            {
              purchase_request: {
                id: 'prq_x',
                title: 'T',
                status: 'APPROVED',
                amount_minor: 1,
                currency,
                requester_id: 'per_x',
                decided_at: null,
              },
            },
            h.clock(),
          ),
        );
      const eur = await emit('EUR');
      const usd = await emit('USD');
      assert.equal(eur.jobs, 0);
      assert.equal(usd.jobs, 1);
      const test = await sendTestEvent(h.services, ws, ep.id);
      await drain();
      assert.deepEqual([...ep.got].sort(), [usd.id, test.event_id].sort());
      await setEndpointFilter(h.services, ws, ep.id, null, 'tester');
      const later = await emit('EUR');
      assert.equal(later.jobs, 1, 'cleared: every event again');
      const audit = (await listAudit(h.services.database.db, ws, { limit: 20 })).filter(
        (a) => a.target === ep.id && a.action === 'endpoint.filter_set',
      );
      assert.deepEqual(
        audit.map((a) => a.detail),
        [{ filter: null }],
      );
    });

    it('the CLI takes --filter on create and sets or clears it with endpoint filter; an invalid one exits 2 with the reason', async () => {
      await freeSlots();
      const run = (...args: string[]) => {
        const r = spawnSync(process.execPath, [BIN, ...args], {
          env: {
            ...process.env,
            WSOPS_DATABASE_URL: h.databaseUrl,
            WSOPS_SECRET: TEST_SECRET,
            WSOPS_LOG_LEVEL: 'silent',
            WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true',
          },
          encoding: 'utf8',
        });
        return { status: r.status, stdout: r.stdout, stderr: r.stderr };
      };
      const create = [
        'endpoint',
        'create',
        '--workspace',
        ws,
        '--url',
        rx.url('/cli'),
        '--scopes',
        'assets:read',
        '--events',
        'asset.assigned',
      ];
      const bad = run(...create, '--filter', '{"data":{"asset":{"__proto__":{"x":1}}}}', '--json');
      assert.equal(bad.status, 2, bad.stderr);
      assert.match(bad.stderr, /invalid filter at filter\.data\.asset\.__proto__: a key naming __proto__/);
      const unknown = run(...create, '--filter', '{"data":{"asset":{"id":{"$like":"a"}}}}');
      assert.equal(unknown.status, 2);
      assert.match(
        unknown.stderr,
        /unknown operator \$like; the operators are \$eq \$neq \$gt \$gte \$lt \$lte \$in \$nin \$exist \$and \$or/,
      );
      const made = run(...create, '--filter', '{"data":{"asset":{"id":"ast_1"}}}', '--json');
      assert.equal(made.status, 0, made.stderr);
      const ep = JSON.parse(made.stdout);
      assert.deepEqual(ep.filter, { data: { asset: { id: 'ast_1' } } });
      const listed = run('endpoint', 'list', '--workspace', ws);
      assert.match(listed.stdout, /filter/);
      assert.ok(listed.stdout.includes('{"data":{"asset":{"id":"ast_1"}}}'), listed.stdout);
      const set = run(
        'endpoint',
        'filter',
        '--workspace',
        ws,
        ep.id,
        '--set',
        '{"data":{"assigned_user_id":{"$in":["per_1","per_2"]}}}',
        '--json',
      );
      assert.equal(set.status, 0, set.stderr);
      assert.deepEqual(JSON.parse(set.stdout).filter, { data: { assigned_user_id: { $in: ['per_1', 'per_2'] } } });
      const both = run('endpoint', 'filter', '--workspace', ws, ep.id);
      assert.equal(both.status, 2);
      assert.match(both.stderr, /give either --set JSON or --clear/);
      const cleared = run('endpoint', 'filter', '--workspace', ws, ep.id, '--clear', '--json');
      assert.equal(JSON.parse(cleared.stdout).filter, null);
      const audit = (await listAudit(h.services.database.db, ws, { limit: 20 })).filter((a) => a.target === ep.id);
      assert.deepEqual(
        audit.filter((a) => a.action === 'endpoint.filter_set').map((a) => a.detail),
        [{ filter: null }, { filter: '{"data":{"assigned_user_id":{"$in":["per_1","per_2"]}}}' }],
      );
      assert.equal(audit.find((a) => a.action === 'endpoint.created')?.detail.filter, '{"data":{"asset":{"id":"ast_1"}}}');
    });

    it('the internal API sets and clears it over HTTP with the operator token; an invalid filter or a prototype key is a 400 with the reason', async () => {
      await freeSlots();
      const ep = await newEndpoint();
      const put = (payload: string, token = TOKEN) =>
        fetch(`${internalUrl}/internal/v1/workspaces/${ws}/webhook-endpoints/${ep.id}/filter`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: payload,
        });
      assert.equal((await put('{"filter":null}', 'wrong-token')).status, 401);
      for (const [payload, rule] of [
        [
          '{"filter":{"data":{"purchase_request":{"amount_minor":{"$gt":[1]}}}}}',
          /invalid filter at filter\.data\.purchase_request\.amount_minor\.\$gt: \$gt takes a number/,
        ],
        ['{"filter":{"data":{"$where":"1"}}}', /unknown operator \$where; the operators are/],
        ['{"filter":"{\\"type\\":\\"a\\"}"}', /filter must be a JSON object \(the filter\) or null/],
        ['{"filter":{"type":"a"},"url":"x"}', /Unknown member "url"/],
        ['{}', /\{"filter": null\} to clear it/],
        ['{"filter":{"data":{"prototype":{"x":1}}}}', /naming __proto__, constructor or prototype/],
        ['{"filter":{"data":{"__proto__":{"x":1}}}}', /./],
      ] as const) {
        const res = await put(payload);
        const text = await res.text();
        assert.equal(res.status, 400, text);
        assert.match(JSON.parse(text).detail, rule);
      }
      const res = await put('{"filter":{"data":{"purchase_request":{"status":"APPROVED"}}}}');
      const text = await res.text();
      assert.equal(res.status, 200, text);
      assert.deepEqual(JSON.parse(text).filter, { data: { purchase_request: { status: 'APPROVED' } } });
      assert.ok(!text.includes('whsec_'), 'never the secret');
      const cleared = await put('{"filter":null}');
      assert.equal((await cleared.json()).filter, null);
      const [entry] = await listAudit(h.services.database.db, ws, { limit: 1 });
      assert.equal(entry?.action, 'endpoint.filter_set');
      assert.equal(entry?.actor, 'operator');
    });

    it('the console: the register form refuses an invalid filter beside the field; the endpoint page shows, saves and tests it against a recent event', async () => {
      await freeSlots();
      const form = { url: rx.url('/console'), scopes: 'approvals:read', events: 'purchase_request.decided' };
      const refused = await admin.post('/console/webhooks/new', { ...form, filter: '{"data":{"amount":{"$regex":"^9+$"}}}' });
      assert.equal(refused.status, 400);
      assert.match(
        refused.body,
        /<p class="error" id="f-filter-error">invalid filter at filter\.data\.amount\.\$regex: unknown operator \$regex/,
      );
      assert.ok(refused.body.includes('^9+$'), 'the text typed is kept');
      const proto = await admin.post('/console/webhooks/new', { ...form, filter: '{"__proto__":{"x":1}}' });
      assert.equal(proto.status, 400);
      assert.match(proto.body, /id="f-filter-error">invalid filter at filter\.__proto__: a key naming __proto__/);
      const made = await admin.post('/console/webhooks/new', { ...form, filter: '{"data":{"purchase_request":{"status":"REJECTED"}}}' });
      assert.equal(made.status, 200, made.body.slice(0, 500));
      const id = /href="\/console\/webhooks\/(we_[^"]+)"/.exec(made.body)?.[1] as string;
      assert.ok(id, 'the new endpoint is linked');
      const page = await admin.get(`/console/webhooks/${id}`);
      assert.ok(
        page.body.includes(
          'data-filter>{&quot;data&quot;:{&quot;purchase_request&quot;:{&quot;status&quot;:&quot;REJECTED&quot;}}}</code>',
        ),
        page.body.slice(page.body.indexOf('id="filter"'), page.body.indexOf('id="filter"') + 600),
      );

      // A recent event of the workspace, a rejection, through the outbox.
      const decided = await h.services.database.db.transaction().execute((trx) =>
        emitEvent(
          trx,
          ws,
          'purchase_request.decided',
          {
            purchase_request: {
              id: 'prq_y',
              title: 'T',
              status: 'REJECTED',
              amount_minor: 700,
              currency: 'EUR',
              requester_id: 'per_y',
              decided_at: null,
            },
          },
          h.clock(),
        ),
      );
      const eventId = decided.id;
      const fresh = await admin.get(`/console/webhooks/${id}`);
      assert.ok(fresh.body.includes(`<option value="${eventId}"`), 'the recent event is offered');
      const matched = await admin.post(`/console/webhooks/${id}/filter/test`, {
        filter: '{"data":{"purchase_request":{"status":"REJECTED"}}}',
        event_id: eventId,
      });
      assert.equal(matched.status, 200);
      assert.match(matched.body, /data-filter-trial="matched">Matched:/);
      const missed = await admin.post(`/console/webhooks/${id}/filter/test`, {
        filter: '{"data":{"purchase_request":{"amount_minor":{"$lt":0}}}}',
        event_id: eventId,
      });
      assert.match(
        missed.body,
        /data-filter-trial="not-matched">Not matched:.*the clause that failed: <code>data\.purchase_request\.amount_minor\.\$lt<\/code>/s,
      );
      assert.ok(missed.body.includes('$lt'), 'the draft is kept in the field');
      const invalid = await admin.post(`/console/webhooks/${id}/filter/test`, { filter: '{"data":1', event_id: eventId });
      assert.equal(invalid.status, 400);
      assert.match(invalid.body, /id="f-filter-error">invalid filter at filter: not JSON/);
      const otherType = await admin.post(`/console/webhooks/${id}/filter/test`, { filter: '', event_id: 'evt_nope' });
      assert.equal(otherType.status, 400);
      assert.match(otherType.body, /id="f-event_id-error">choose one of the recent events/);
      const noCsrf = await admin.post(`/console/webhooks/${id}/filter`, { _csrf: '', filter: '' });
      assert.equal(noCsrf.status, 403);

      const saved = await admin.post(`/console/webhooks/${id}/filter`, { filter: '{"data":{"purchase_request":{"currency":"EUR"}}}' });
      assert.equal(saved.status, 303);
      assert.match(saved.location, /notice=filter_set/);
      const after = (
        await h.services.database.db.selectFrom('webhook_endpoints').select('filter').where('id', '=', id).executeTakeFirstOrThrow()
      ).filter;
      assert.equal(after, '{"data":{"purchase_request":{"currency":"EUR"}}}');
      const [entry] = await listAudit(h.services.database.db, ws, { limit: 1 });
      assert.equal(entry?.action, 'endpoint.filter_set');
      assert.match(entry?.actor ?? '', /^console:/);
    });
  });
}
