/**
 * The ready receivers keep the raw body, verify with verifyWebhook, answer 400 with the
 * reason when a delivery is not authentic, and with an IdempotencyGuard run each event id once.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import {
  expressWebhookHandler,
  fastifyWebhookPlugin,
  IdempotencyGuard,
  MemoryIdempotencyStore,
  nodeWebhookHandler,
  type WebhookEvent,
} from '@wsops/client';
import Fastify from 'fastify';
import { signatureHeader } from '../../../src/webhooks/signing/signature.js';

const SECRET = 'whsec_test_0123456789';
const OLD = 'whsec_old_9876543210';
// Unusual spacing and a non-ASCII character: re-serialising would change the bytes.
const body = (id: string) =>
  `{"id":"${id}", "type":"asset.assigned","created":"2026-11-22T08:00:00.000Z","api_version":"1","data":{"note":"é"}}`;

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function post(url: string, raw: string, header: string | undefined) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(header ? { 'x-service-signature': header } : {}) },
    body: raw,
  });
}

const now = () => Math.floor(Date.now() / 1000);

describe('nodeWebhookHandler', () => {
  const received: WebhookEvent[] = [];
  let fail = false;
  const server = createServer(
    nodeWebhookHandler({
      secret: SECRET,
      idempotency: new IdempotencyGuard(),
      onEvent: (e) => {
        if (fail) throw new Error('downstream down');
        received.push(e);
      },
    }),
  );
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('accepts what the server signs (also two v1 during a rotation) and hands over the parsed event', async () => {
    const url = await listen(server);
    const raw = body('evt_1');
    const res = await post(url, raw, signatureHeader([SECRET], now(), raw));
    assert.equal(res.status, 200);
    assert.deepEqual(received.at(-1), JSON.parse(raw));
    const rotated = body('evt_2');
    assert.equal((await post(url, rotated, signatureHeader([OLD, SECRET], now(), rotated))).status, 200);
    assert.equal(received.length, 2);
  });

  it('refuses a tampered body, a wrong secret, a stale timestamp and a missing header with 400 and the reason', async () => {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const raw = body('evt_3');
    const cases: [string, string | undefined, string][] = [
      [raw.replace('é', 'e'), signatureHeader([SECRET], now(), raw), 'no_matching_signature'],
      [raw, signatureHeader(['whsec_wrong'], now(), raw), 'no_matching_signature'],
      // t is whole seconds and the handler reads its own clock later: ±301 s from a floored
      // now can land inside 300 s once the request crosses a second boundary under load.
      // The exact edge is tested in test/webhooks/signature.test.ts with an injected clock.
      [raw, signatureHeader([SECRET], now() - 310, raw), 'timestamp_out_of_tolerance'],
      [raw, signatureHeader([SECRET], now() + 310, raw), 'timestamp_out_of_tolerance'],
      [raw, undefined, 'missing_header'],
    ];
    for (const [sent, header, reason] of cases) {
      const res = await post(url, sent, header);
      assert.equal(res.status, 400);
      assert.deepEqual(await res.json(), { error: reason });
    }
    assert.equal(received.length, 2, 'nothing refused reached onEvent');
  });

  it('a redelivered event id is acknowledged without running onEvent again; a failed one is retried', async () => {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const raw = body('evt_1');
    const res = await post(url, raw, signatureHeader([SECRET], now(), raw));
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { received: true, duplicate: true });
    assert.equal(received.length, 2);
    fail = true;
    const next = body('evt_4');
    assert.equal((await post(url, next, signatureHeader([SECRET], now(), next))).status, 500);
    fail = false;
    assert.equal((await post(url, next, signatureHeader([SECRET], now(), next))).status, 200);
    assert.equal(received.at(-1)?.id, 'evt_4');
  });
});

describe('expressWebhookHandler (Express-shaped req/res, no express dependency)', () => {
  it('verifies a raw Buffer body (express.raw) and refuses a body a JSON parser already consumed', async () => {
    const got: string[] = [];
    const handler = expressWebhookHandler({ secret: SECRET, onEvent: (e) => void got.push(e.id) });
    let mode: 'raw' | 'parsed' = 'raw';
    const server = createServer(async (req: IncomingMessage & { body?: unknown }, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const bytes = Buffer.concat(chunks);
      req.body = mode === 'raw' ? bytes : JSON.parse(bytes.toString('utf8'));
      handler(req, res);
    });
    const url = await listen(server);
    try {
      const raw = body('evt_x');
      assert.equal((await post(url, raw, signatureHeader([SECRET], now(), raw))).status, 200);
      assert.deepEqual(got, ['evt_x']);
      mode = 'parsed';
      const res = await post(url, raw, signatureHeader([SECRET], now(), raw));
      assert.equal(res.status, 500);
      assert.deepEqual(await res.json(), { error: 'body_already_parsed' });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('fastifyWebhookPlugin', () => {
  it('keeps the raw body inside its own scope, leaving the app JSON parser alone elsewhere', async () => {
    const got: string[] = [];
    const app = Fastify();
    await app.register(fastifyWebhookPlugin({ path: '/hooks', secret: [OLD, SECRET], onEvent: (e) => void got.push(e.id) }));
    app.post('/other', async (request) => ({ parsed: typeof request.body }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    try {
      const raw = body('evt_f');
      assert.equal((await post(`${url}/hooks`, raw, signatureHeader([SECRET], now(), raw))).status, 200);
      assert.deepEqual(got, ['evt_f']);
      const bad = await post(`${url}/hooks`, raw, `t=${now()}`);
      assert.equal(bad.status, 400);
      assert.deepEqual(await bad.json(), { error: 'missing_signature' });
      assert.deepEqual(await (await post(`${url}/other`, '{"a":1}', undefined)).json(), { parsed: 'object' });
    } finally {
      await app.close();
    }
  });
});

describe('IdempotencyGuard', () => {
  it('remembers an event id for the TTL, then forgets it (memory store, injected clock)', async () => {
    let t = 0;
    const store = new MemoryIdempotencyStore();
    const guard = new IdempotencyGuard({ store, ttlMs: 1000, now: () => t });
    let runs = 0;
    assert.equal(await guard.once('evt_a', () => runs++), true);
    assert.equal(await guard.once('evt_a', () => runs++), false);
    t = 999;
    assert.equal(await guard.once('evt_a', () => runs++), false);
    t = 1000;
    assert.equal(await guard.once('evt_a', () => runs++), true);
    assert.equal(runs, 2);
    await assert.rejects(guard.once('evt_b', () => Promise.reject(new Error('x'))));
    assert.equal(await guard.once('evt_b', () => runs++), true, 'a failed run frees the id');
  });
});
