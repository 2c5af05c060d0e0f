/**
 * Slow and stalled clients cannot hold the server: bodies are never read where no body is
 * taken, a request must arrive within the request deadline and its headers within the header
 * deadline, and a normal request is answered while a thousand stalled sockets are held.
 * Real sockets against a real listening server (not inject()).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { until } from '../helpers/processes.js';

const REQUEST_TIMEOUT_MS = 4000;
const HEADERS_TIMEOUT_MS = 2500;
/** Node checks deadlines every connectionsCheckingInterval (here 1 s); the rest is scheduling slack. */
const CLOSE_SLACK_MS = 1000 + 1500;
const STALLED = 1000;

interface Held {
  socket: net.Socket;
  openedAt: number;
  closedAt?: number;
  received: string;
}

function hold(port: number, payload: string): Promise<Held> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const held: Held = { socket, openedAt: Date.now(), received: '' };
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      held.received += d;
    });
    socket.on('close', () => {
      held.closedAt = Date.now();
    });
    socket.on('error', () => {});
    socket.once('connect', () => {
      socket.write(payload);
      resolve(held);
    });
    socket.once('error', reject);
  });
}

/** Waits for the server to close the socket, at most `ms` (a server that never closes fails, not hangs). */
function closedWithin(held: Held, ms: number): Promise<boolean> {
  if (held.closedAt !== undefined) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    held.socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

async function acceptedAtLeast(accepted: () => number, n: number): Promise<void> {
  const giveUp = Date.now() + 10_000;
  while (accepted() < n && Date.now() < giveUp) await new Promise((r) => setTimeout(r, 5));
}

const statusOf = (received: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0);

for (const dialect of DIALECTS) {
  describe(`slow clients [${dialect}]`, () => {
    let h: Harness;
    let app: FastifyInstance;
    let port: number;
    let key: string;
    let accepted = 0;
    before(async () => {
      h = await createHarness(dialect, {
        WSOPS_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
        WSOPS_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
        WSOPS_MAX_CONNECTIONS: '5000',
      });
      const ws = await h.workspace({ seed: false });
      ({ key } = await h.key(ws));
      // The application as served, plus a route that takes a body, as the console's form posts will.
      app = buildApp(h.services);
      app.post('/console/echo', async (request) => ({ got: request.body }));
      await app.listen({ port: 0, host: '127.0.0.1' });
      app.server.on('connection', () => {
        accepted++;
      });
      port = (app.server.address() as net.AddressInfo).port;
    });
    after(async () => {
      await app.close();
      await h.close();
    });

    it('connections beyond WSOPS_MAX_CONNECTIONS are closed on arrival; the held ones are unaffected', async () => {
      const capped = buildApp({ ...h.services, config: { ...h.services.config, maxConnections: 5 } });
      await capped.listen({ port: 0, host: '127.0.0.1' });
      const cappedPort = (capped.server.address() as net.AddressInfo).port;
      const held: Held[] = [];
      try {
        for (let i = 0; i < 5; i++) held.push(await hold(cappedPort, 'GET /healthz HTTP/1.1\r\nHost: t\r\n'));
        // The server has accepted all five before the sixth arrives.
        const open = () => new Promise<number>((r) => capped.server.getConnections((_e, n) => r(n)));
        await until(async () => (await open()) === 5, 10_000, 'the server to accept five connections', 5);
        const extra = await hold(cappedPort, 'GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n');
        assert.ok(await closedWithin(extra, 2000), 'the sixth connection is closed');
        assert.equal(extra.received, '', 'and gets no answer');
        assert.ok(
          held.every((x) => x.closedAt === undefined),
          'the first five are still open',
        );
      } finally {
        for (const x of held) x.socket.destroy();
        await capped.close();
      }
    });

    it('a body is still taken under /console, where the console will take form posts', async () => {
      const res = await fetch(`http://127.0.0.1:${port}/console/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"a":1}',
      });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { got: { a: 1 } });
    });

    for (const [name, payload] of [
      ['a declared 50,000-byte body that never comes', 'POST /api/v1/assets HTTP/1.1\r\nHost: t\r\nContent-Length: 50000\r\n\r\n'],
      ['an unfinished chunked body', 'PUT /api/v1/assets/ast_x HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc'],
      ['a body on a path that takes none', 'DELETE /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 50000\r\n\r\n'],
    ] as const) {
      it(`a write with ${name} is answered 405 at once, before the body, and the connection is closed`, async () => {
        const held = await hold(port, payload);
        assert.ok(await closedWithin(held, HEADERS_TIMEOUT_MS), 'the server closed the connection');
        assert.equal(statusOf(held.received), 405, held.received.slice(0, 200));
        assert.match(held.received, /\r\nallow: GET, HEAD\r\n/i);
        assert.match(held.received, /\r\nconnection: close\r\n/i);
        assert.match(held.received, /application\/problem\+json/);
        assert.ok((held.closedAt as number) - held.openedAt < HEADERS_TIMEOUT_MS, 'closed by the answer, not by a deadline');
      });
    }

    it(`with ${STALLED} stalled sockets held, a normal request is answered, and every stalled socket is closed within its deadline`, async (t) => {
      const kinds = [
        // Headers never finished: the header deadline.
        'GET /api/v1/assets HTTP/1.1\r\nHost: t\r\nX-Slow: ',
        // A body that never finishes, where bodies are taken: the request deadline.
        'POST /console/echo HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"a":',
        'POST /console/echo HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\n',
      ];
      const stalled: Held[] = [];
      const before = accepted;
      for (let i = 0; i < STALLED; i += 50) {
        stalled.push(...(await Promise.all(Array.from({ length: 50 }, (_, j) => hold(port, kinds[(i + j) % kinds.length] as string)))));
        // Client and server share this process: let the server accept each batch, so no
        // connection waits in the kernel's accept queue and its deadline runs from now.
        await acceptedAtLeast(() => accepted - before, stalled.length);
        for (const s of stalled.slice(-50)) s.openedAt = Date.now();
      }
      const idle = performance.now();
      await (await fetch(`http://127.0.0.1:${port}/healthz`)).arrayBuffer();
      const idleLatency = performance.now() - idle;
      const started = performance.now();
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/scopes`, {
        headers: { authorization: `Bearer ${key}` },
        signal: AbortSignal.timeout(2000),
      });
      const latency = performance.now() - started;
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      t.diagnostic(
        `normal request answered in ${latency.toFixed(1)} ms with ${STALLED} stalled sockets held (${idleLatency.toFixed(1)} ms for /healthz just before)`,
      );
      const stillOpen = stalled.filter((s) => s.closedAt === undefined).length;
      assert.ok(stillOpen > STALLED / 2, `the stalled sockets were still held while the request was answered (${stillOpen} open)`);

      const closedInTime = await Promise.all(stalled.map((s) => closedWithin(s, REQUEST_TIMEOUT_MS + CLOSE_SLACK_MS)));
      assert.equal(closedInTime.filter((c) => !c).length, 0, 'every stalled socket closed by the server');
      for (const [i, s] of stalled.entries()) {
        const deadline = i % kinds.length === 0 ? HEADERS_TIMEOUT_MS : REQUEST_TIMEOUT_MS;
        const lived = (s.closedAt as number) - s.openedAt;
        assert.ok(lived <= deadline + CLOSE_SLACK_MS, `socket ${i} closed after ${lived} ms (deadline ${deadline} ms)`);
        assert.equal(statusOf(s.received), 408, `socket ${i}: ${s.received.slice(0, 120)}`);
        assert.match(s.received, /application\/problem\+json/);
      }
    });
  });
}
