/**
 * @wsops/client against a real server (both dialects): paging, typed errors produced by real
 * responses, retries honouring Retry-After, timeouts, AbortSignal, and the key kept secret.
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { inspect } from 'node:util';
import {
  AuthenticationError,
  ConnectionError,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  REGISTERS,
  ServerError,
  TimeoutError,
  WsopsClient,
} from '@wsops/client';
import { DIALECTS, startServer, type TestServer } from './helpers/server.js';

/** A fetch that counts calls (and what it was asked), around the real one. */
function countingFetch() {
  const calls: { url: string; at: number }[] = [];
  const f = (input: string, init: RequestInit) => {
    calls.push({ url: input, at: Date.now() });
    return fetch(input, init);
  };
  return { calls, fetch: f };
}

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function expectError<E extends Error>(type: new (...a: never[]) => E, check: (e: E) => void = () => {}) {
  return (err: unknown) => {
    assert.ok(err instanceof type, `expected ${type.name}, got ${String(err)}`);
    check(err);
    return true;
  };
}

for (const dialect of DIALECTS) {
  describe(`@wsops/client (${dialect})`, () => {
    let s: TestServer;
    let workspace: string;
    let key: string;
    let client: WsopsClient;

    before(async () => {
      s = await startServer(dialect);
      workspace = await s.workspace();
      key = (await s.key(workspace)).key;
      client = new WsopsClient({ apiKey: key, baseUrl: s.baseUrl });
    });
    after(() => s.close());

    it('has one camelCase resource per register of the OpenAPI document', () => {
      const served = REGISTERS.map((r) => r.property);
      assert.equal(served.length, 11);
      for (const name of ['purchaseRequests', 'learningAssignments', 'workplaceRecords', 'assets', 'tasks']) {
        assert.ok(served.includes(name as never), name);
        assert.equal(typeof (client as unknown as Record<string, { list: unknown }>)[name]?.list, 'function');
      }
    });

    it('list() yields every record across pages, in (updated_at, id) order, the same as a raw walk', async () => {
      const viaClient = [];
      for await (const person of client.people.list({ limit: 7 })) viaClient.push(person);
      const raw: { id: string; updated_at: string }[] = [];
      let cursor: string | undefined;
      do {
        const res = await s.get(`/api/v1/people?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, key);
        raw.push(...res.json.data);
        cursor = res.json.next_cursor ?? undefined;
      } while (cursor);
      assert.ok(raw.length > 7, 'the seed gives more than one page of people');
      assert.deepEqual(viaClient, raw);
    });

    it('list() passes filters and updated_since; listPage() gives the envelope for callers keeping their own cursor', async () => {
      const all = [];
      for await (const a of client.assets.list({ status: 'AVAILABLE' })) all.push(a);
      assert.ok(all.length > 0 && all.every((a) => a.status === 'AVAILABLE'));
      const first = await client.assets.listPage({ status: 'AVAILABLE', limit: 1 });
      assert.equal(first.data.length, 1);
      assert.equal(first.has_more, all.length > 1);
      if (first.next_cursor) {
        const second = await client.assets.listPage({ status: 'AVAILABLE', limit: 1, cursor: first.next_cursor });
        assert.equal(second.data[0]?.id, all[1]?.id);
      }
      const pivot = all[0]!.updated_at;
      for await (const a of client.assets.list({ status: 'AVAILABLE', updated_since: pivot })) assert.ok(a.updated_at > pivot);
    });

    it('get(id) returns the same object as the list; an unknown id is a NotFoundError with the request_id', async () => {
      const first = (await client.vendors.listPage({ limit: 1 })).data[0]!;
      assert.deepEqual(await client.vendors.get(first.id), first);
      await assert.rejects(
        client.vendors.get('ven_doesnotexist'),
        expectError(NotFoundError, (e) => {
          assert.equal(e.status, 404);
          assert.equal(e.code, 'not_found');
          assert.match(e.requestId ?? '', /^req_/);
          assert.equal(e.request_id, e.requestId);
        }),
      );
    });

    it('scopes() reports the key', async () => {
      const scopes = await client.scopes();
      assert.equal(scopes.workspace_id, workspace);
      assert.ok(scopes.scopes.includes('assets:read'));
      assert.equal(scopes.key_id, client.keyId);
    });

    it('a refused key is an AuthenticationError; a missing scope a PermissionError naming it', async () => {
      const wrong = new WsopsClient({ apiKey: `${key.slice(0, -4)}AAAA`, baseUrl: s.baseUrl });
      await assert.rejects(
        wrong.scopes(),
        expectError(AuthenticationError, (e) => {
          assert.equal(e.status, 401);
          assert.match(e.requestId ?? '', /^req_/);
        }),
      );
      const narrow = new WsopsClient({ apiKey: (await s.key(workspace, ['people:read'])).key, baseUrl: s.baseUrl });
      await assert.rejects(
        narrow.vendors.listPage(),
        expectError(PermissionError, (e) => {
          assert.equal(e.status, 403);
          assert.equal(e.missingScope, 'vendors:read');
        }),
      );
    });

    it('a bad parameter is an InvalidRequestError with param and code', async () => {
      await assert.rejects(
        client.assets.listPage({ limit: 5000 }),
        expectError(InvalidRequestError, (e) => {
          assert.equal(e.param, 'limit');
          assert.equal(e.code, 'invalid_parameter');
          assert.match(e.requestId ?? '', /^req_/);
        }),
      );
      await assert.rejects(
        client.assets.listPage({ cursor: 'forged' }),
        expectError(InvalidRequestError, (e) => assert.equal(e.code, 'invalid_cursor')),
      );
    });

    it('the key never appears in util.inspect, JSON, or any error message', async () => {
      const secret = key.split('_').at(-1)!;
      assert.ok(!inspect(client, { depth: 10, showHidden: true }).includes(secret));
      assert.ok(!JSON.stringify(client).includes(secret));
      assert.ok(inspect(client).includes(client.keyId!), 'inspect shows the public key id');
      const errors: unknown[] = [];
      const closed = await closedPort();
      for (const request of [
        () => client.vendors.get('ven_nope'),
        () => client.assets.listPage({ limit: 0 }),
        () => new WsopsClient({ apiKey: `${key}x`, baseUrl: s.baseUrl }).scopes(),
        () => new WsopsClient({ apiKey: key, baseUrl: `http://127.0.0.1:${closed}`, maxRetries: 0 }).scopes(),
      ]) {
        await request().catch((e) => errors.push(e));
      }
      assert.equal(errors.length, 4);
      for (const e of errors) {
        assert.ok(!inspect(e, { depth: 10 }).includes(secret), inspect(e));
        assert.ok(!String((e as Error).message).includes(secret));
      }
    });

    it('an AbortSignal stops a walk', async () => {
      const controller = new AbortController();
      controller.abort(new Error('stop'));
      await assert.rejects(client.people.list({}, { signal: controller.signal }).next(), /stop/);
    });
  });

  describe(`@wsops/client retries (${dialect})`, () => {
    it('a 429 is retried after Retry-After and then succeeds; when retries run out it is a RateLimitError with retryAfter and keyId', async () => {
      const s = await startServer(dialect, { WSOPS_RATE_LIMIT_PER_SECOND: '1', WSOPS_RATE_LIMIT_BURST: '1' });
      try {
        const ws = await s.workspace({ seed: false });
        const k = await s.key(ws);
        // The server's rate limiter reads its (test) clock: let it follow real time here.
        const counter = countingFetch();
        const realTime = (input: string, init: RequestInit) => {
          s.clock.set(Date.now());
          return counter.fetch(input, init);
        };
        const c = new WsopsClient({ apiKey: k.key, baseUrl: s.baseUrl, fetch: realTime, maxRetries: 2 });
        await c.scopes();
        const start = Date.now();
        await c.scopes(); // refused once (bucket empty), retried after Retry-After
        assert.equal(counter.calls.length, 3);
        assert.ok(counter.calls[2]!.at - counter.calls[1]!.at >= 1000, 'waited at least Retry-After (1 s)');
        assert.ok(Date.now() - start < 5000);

        const noRetry = new WsopsClient({ apiKey: k.key, baseUrl: s.baseUrl, fetch: realTime, maxRetries: 0 });
        await assert.rejects(
          noRetry.scopes(),
          expectError(RateLimitError, (e) => {
            assert.equal(e.status, 429);
            assert.equal(e.keyId, k.keyId);
            assert.equal(e.retryAfter, 1);
            assert.match(e.requestId ?? '', /^req_/);
          }),
        );
      } finally {
        await s.close();
      }
    });

    it('a 5xx is retried with backoff, then a ServerError with the request_id', async () => {
      const s = await startServer(dialect);
      const ws = await s.workspace({ seed: false });
      const k = await s.key(ws);
      const counter = countingFetch();
      const c = new WsopsClient({ apiKey: k.key, baseUrl: s.baseUrl, fetch: counter.fetch, maxRetries: 2, maxRetryDelayMs: 50 });
      await c.people.listPage();
      // The database goes away under the running server: every request is now a 500.
      await s.services.database.close();
      try {
        await assert.rejects(
          c.people.listPage(),
          expectError(ServerError, (e) => {
            assert.equal(e.status, 500);
            assert.equal(e.code, 'internal_error');
            assert.match(e.requestId ?? '', /^req_/);
          }),
        );
        assert.equal(counter.calls.length, 1 + 3);
      } finally {
        await s.app.close();
        await s.close().catch(() => {});
      }
    });
  });
}

describe('@wsops/client network failures', () => {
  let stalled: Server;
  let stalledPort: number;
  const sockets = new Set<Socket>();
  before(async () => {
    // Accepts connections and never answers.
    stalled = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
    stalledPort = (stalled.address() as { port: number }).port;
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => stalled.close(() => resolve()));
  });

  it('no answer within timeoutMs is a TimeoutError, after the retries', async () => {
    const counter = countingFetch();
    const c = new WsopsClient({
      apiKey: 'svc_sk_test_abc_def',
      baseUrl: `http://127.0.0.1:${stalledPort}`,
      timeoutMs: 100,
      maxRetries: 1,
      maxRetryDelayMs: 10,
      fetch: counter.fetch,
    });
    await assert.rejects(
      c.scopes(),
      expectError(TimeoutError, (e) => assert.match(e.message, /100 ms/)),
    );
    assert.equal(counter.calls.length, 2);
  });

  it('a refused connection is a ConnectionError, after the retries', async () => {
    const counter = countingFetch();
    const port = await closedPort();
    const c = new WsopsClient({
      apiKey: 'svc_sk_test_abc_def',
      baseUrl: `http://127.0.0.1:${port}`,
      maxRetries: 2,
      maxRetryDelayMs: 10,
      fetch: counter.fetch,
    });
    await assert.rejects(
      c.scopes(),
      expectError(ConnectionError, (e) => assert.ok(e.message.includes(`127.0.0.1:${port}`), e.message)),
    );
    assert.equal(counter.calls.length, 3);
  });

  it('an abort during the wait for a response ends the request at once, without retrying', async () => {
    const c = new WsopsClient({ apiKey: 'svc_sk_test_abc_def', baseUrl: `http://127.0.0.1:${stalledPort}`, timeoutMs: 10_000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('caller gave up')), 50);
    const start = Date.now();
    await assert.rejects(c.scopes({ signal: controller.signal }), /caller gave up/);
    assert.ok(Date.now() - start < 2000);
  });

  it('refuses a client without a key or base URL, saying what is needed', () => {
    assert.throws(() => new WsopsClient({ apiKey: '', baseUrl: 'http://x' }), /apiKey/);
    assert.throws(() => new WsopsClient({ apiKey: 'k', baseUrl: 'x' }), /baseUrl/);
  });
});
