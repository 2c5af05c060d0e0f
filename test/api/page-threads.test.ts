/**
 * Page threads (ADR 16): `wsops serve` reads list pages on WSOPS_PAGE_THREADS worker threads.
 * A client must not be able to tell: a page from a thread is the same bytes as one read on the
 * event loop (every query shape, every content coding), and a thread that exits with pages in
 * flight loses none of them: they are read on the event loop and the thread is started again.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Agent, request } from 'undici';
import { filterDigest } from '../../src/api/cursor.js';
import type { PageJob } from '../../src/api/page-body.js';
import { createSlotArena, SLOT_COUNT } from '../../src/api/page-slots.js';
import { pageThreadModule } from '../../src/api/page-thread-code.js';
import type { ThreadAnswer, ThreadData, ThreadJob } from '../../src/api/page-threads.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness, TEST_SECRET } from '../helpers/harness.js';
import { until } from '../helpers/processes.js';

/** `count` HTTP/1.1 responses with Content-Length, read off a raw socket in order: their bodies. */
async function readResponses(socket: Socket, count: number): Promise<string[]> {
  const bodies: string[] = [];
  let buffered = Buffer.alloc(0);
  socket.resume();
  for await (const chunk of socket) {
    buffered = Buffer.concat([buffered, chunk as Buffer]);
    for (;;) {
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) break;
      const length = Number(/content-length: (\d+)/i.exec(buffered.subarray(0, end).toString('latin1'))?.[1]);
      if (buffered.length < end + 4 + length) break;
      bodies.push(buffered.subarray(end + 4, end + 4 + length).toString('utf8'));
      buffered = buffered.subarray(end + 4 + length);
    }
    if (bodies.length >= count) break;
  }
  return bodies;
}

function decoded(res: { headers: Record<string, unknown>; rawPayload: Buffer }): string {
  const coding = res.headers['content-encoding'];
  if (coding === 'br') return brotliDecompressSync(res.rawPayload).toString('utf8');
  if (coding === 'gzip') return gunzipSync(res.rawPayload).toString('utf8');
  return res.rawPayload.toString('utf8');
}

for (const dialect of DIALECTS) {
  describe(`page threads [${dialect}]`, () => {
    let h: Harness;
    let key: string;
    let urls: string[];
    let workspace: string;
    const raw = (url: string, coding?: string) =>
      h.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}`, ...(coding ? { 'accept-encoding': coding } : {}) } });

    before(async () => {
      h = await createHarness(dialect);
      workspace = await h.workspace();
      ({ key } = await h.key(workspace));
      const first = (await h.get('/api/v1/assets?limit=5', key)).json as { next_cursor: string; data: { updated_at: string }[] };
      const since = encodeURIComponent(first.data[2]?.updated_at as string);
      urls = [
        '/api/v1/assets?limit=1',
        '/api/v1/assets?limit=100',
        '/api/v1/assets?limit=1000',
        `/api/v1/assets?limit=5&cursor=${encodeURIComponent(first.next_cursor)}`,
        '/api/v1/assets?status=AVAILABLE&limit=20',
        `/api/v1/assets?updated_since=${since}&limit=50`,
        '/api/v1/people?search=a&limit=30',
        '/api/v1/vendors?limit=1000',
        '/api/v1/locations?limit=2',
      ];
    });
    after(() => h.close());

    /** The first page of 7 assets, as the list route asks for it with no Accept-Encoding. */
    const firstPageJob = (): PageJob => ({
      workspaceId: workspace,
      register: 'assets',
      filters: {},
      searchWords: [],
      limit: 7,
      digest: filterDigest({ search: undefined, updated_since: undefined }),
      issuedAt: h.clock(),
      coding: 'identity',
    });
    const startThreads = async () => {
      await h.services.startPageThreads();
      await until(() => h.services.pages.readyThreads >= 1, 10_000, 'a ready thread', 20);
    };

    it('a page read on a thread is the same bytes as one read on the event loop, identity, br and gzip alike', async () => {
      assert.equal(h.services.pages.readyThreads, 0, 'a harness reads on the event loop until threads are started');
      const onLoop = await Promise.all(urls.map((u) => raw(u)));
      for (const [i, res] of onLoop.entries()) assert.equal(res.statusCode, 200, `${urls[i]}: ${res.body}`);
      await h.services.startPageThreads();
      assert.equal(h.services.pages.readyThreads, 1, 'WSOPS_PAGE_THREADS defaults to one thread');
      for (const coding of [undefined, 'br', 'gzip']) {
        const onThread = await Promise.all(urls.map((u) => raw(u, coding)));
        for (const [i, res] of onThread.entries()) {
          assert.equal(res.statusCode, 200, urls[i]);
          assert.equal(decoded(res), onLoop[i]?.body, `${urls[i]} with ${coding ?? 'no'} Accept-Encoding`);
          assert.match(String(res.headers.vary), /Accept-Encoding/);
          const large = (onLoop[i]?.rawPayload.length ?? 0) >= 1024;
          assert.equal(
            res.headers['content-encoding'],
            coding && large ? coding : undefined,
            `${urls[i]}: compressed when asked and 1 KB or more`,
          );
        }
      }
      // Stopped, so the next test starts exactly one and can count it coming back.
      await h.services.pages.stopThreads();
    });

    it('pages in flight on a thread that exits are read on the event loop, and the thread is started again', async () => {
      await startThreads();
      const expected = (await raw('/api/v1/assets?limit=1000')).body;
      const inFlight = Array.from({ length: 30 }, () => raw('/api/v1/assets?limit=1000'));
      await h.services.pages.stopThreads(true);
      const answers = await Promise.all(inFlight);
      for (const res of answers) {
        assert.equal(res.statusCode, 200, res.body.slice(0, 200));
        assert.equal(res.body, expected, 'every page in flight still arrives whole');
      }
      assert.equal(h.services.pages.readyThreads, 0);
      await until(() => h.services.pages.readyThreads === 1, 10_000, 'the thread to be started again', 20);
      assert.equal((await raw('/api/v1/assets?limit=1000')).body, expected);
    });

    it('a page a request reads comes back in a shared slot, which is free again once released, and twice is harmless', async () => {
      await startThreads();
      const expected = (await raw('/api/v1/assets?limit=7')).body;
      await until(() => h.services.pages.heldSlots === 0, 5_000, 'the response to close', 10);
      const page = await h.services.pages.read(firstPageJob());
      assert.equal(typeof page.release, 'function', 'a body in a slot comes with its release');
      assert.ok(page.body.buffer instanceof SharedArrayBuffer, 'the body is a view of the shared slots, not a transferred buffer');
      assert.equal(page.body.toString('utf8'), expected);
      assert.equal(h.services.pages.heldSlots, 1, 'held until released');
      page.release?.();
      page.release?.();
      assert.equal(h.services.pages.heldSlots, 0);
      await h.services.pages.stopThreads();
    });

    it('with every slot held, pages still arrive whole, transferred: running out of slots is slower, never wrong', async () => {
      await startThreads();
      const expected = (await raw('/api/v1/assets?limit=7')).body;
      await until(() => h.services.pages.heldSlots === 0, 5_000, 'the response to close', 10);
      const pages = [];
      for (let i = 0; i < SLOT_COUNT + 3; i++) pages.push(await h.services.pages.read(firstPageJob()));
      assert.equal(h.services.pages.heldSlots, SLOT_COUNT);
      for (const [i, page] of pages.entries()) {
        assert.equal(page.body.toString('utf8'), expected, `page ${i}`);
        assert.equal(page.release === undefined, i >= SLOT_COUNT, `page ${i}: in a slot while one was free, transferred after`);
      }
      for (const page of pages) page.release?.();
      assert.equal(h.services.pages.heldSlots, 0);
      await h.services.pages.stopThreads();
    });

    it('over real HTTP, hundreds of concurrent pages (more than the slots) are each their own bytes, and aborted requests leak no slot', async () => {
      const paths = urls.filter((u) => !u.includes('limit=1000'));
      const coded = paths.flatMap((u) => [undefined, 'br', 'gzip'].map((coding) => ({ u, coding })));
      const expected = new Map<string, string>();
      for (const u of paths) expected.set(u, (await raw(u)).body);
      await startThreads();
      await h.app.listen({ port: 0, host: '127.0.0.1' });
      const address = h.app.server.address();
      assert.ok(address && typeof address === 'object');
      const dispatcher = new Agent({ connections: 50 });
      try {
        const get = async (u: string, coding: string | undefined, signal?: AbortSignal) => {
          const headers: Record<string, string> = { authorization: `Bearer ${key}`, ...(coding ? { 'accept-encoding': coding } : {}) };
          const res = await request(`http://127.0.0.1:${address.port}${u}`, { headers, dispatcher, signal });
          const rawPayload = Buffer.from(await res.body.arrayBuffer());
          return { statusCode: res.statusCode, headers: res.headers as Record<string, unknown>, rawPayload };
        };
        const n = SLOT_COUNT * 4;
        const answers = await Promise.all(
          Array.from({ length: n }, (_, i) => coded[i % coded.length] as { u: string; coding?: string }).map(async ({ u, coding }) => ({
            u,
            coding,
            res: await get(u, coding),
          })),
        );
        for (const { u, coding, res } of answers) {
          assert.equal(res.statusCode, 200, u);
          assert.equal(decoded(res), expected.get(u), `${u} with ${coding ?? 'no'} Accept-Encoding: never another page's bytes`);
        }
        // Clients that give up mid-request, some before their page is read, some while it is sent.
        const aborted = Array.from({ length: 100 }, (_, i) => {
          const controller = new AbortController();
          const { u, coding } = coded[i % coded.length] as { u: string; coding?: string };
          const done = get(u, coding, controller.signal).catch(() => undefined);
          setTimeout(() => controller.abort(), i % 5);
          return done;
        });
        await Promise.all(aborted);
        await until(() => h.services.pages.heldSlots === 0, 5_000, 'every slot to be free once the responses have closed', 20);

        // A client that pipelines more pages than the kernel's socket buffers hold and reads
        // none yet: the last of its pages wait in the server while other clients' pages cycle
        // through the slots. A slot given back before its bytes were written would show here.
        const pipelined = paths.filter((u) => (expected.get(u)?.length ?? 0) > 20_000);
        assert.ok(pipelined.length >= 1, 'pages large enough to fill the socket buffers');
        const asked = Array.from({ length: 300 }, (_, i) => pipelined[i % pipelined.length] as string);
        const socket = connect(address.port, '127.0.0.1');
        socket.pause();
        await new Promise((resolve) => socket.once('connect', resolve));
        socket.write(asked.map((u) => `GET ${u} HTTP/1.1\r\nHost: wsops\r\nAuthorization: Bearer ${key}\r\n\r\n`).join(''));
        await until(() => h.services.pages.heldSlots > 0, 5_000, 'pages of the pipelining client to wait in slots', 10);
        const churn = await Promise.all(
          Array.from({ length: SLOT_COUNT * 2 }, (_, i) => get(paths[i % paths.length] as string, undefined)),
        );
        for (const [i, res] of churn.entries())
          assert.equal(res.rawPayload.toString('utf8'), expected.get(paths[i % paths.length] as string));
        const bodies = await readResponses(socket, asked.length);
        socket.destroy();
        for (const [i, body] of bodies.entries())
          assert.equal(body, expected.get(asked[i] as string), `pipelined page ${i}: its own bytes`);
        await until(() => h.services.pages.heldSlots === 0, 5_000, 'every slot to be free again', 20);
      } finally {
        await dispatcher.close();
        await h.services.pages.stopThreads();
      }
    });

    it('when bundling fails, a thread starts through tsx instead, and its pages are the same bytes', async () => {
      const { url, bundleError } = await pageThreadModule(async () => {
        throw new Error('esbuild is not installed');
      });
      assert.equal(bundleError, 'esbuild is not installed');
      assert.match(url.href, /page-thread-entry\.mjs$/);
      const worker = new Worker(url, {
        workerData: {
          databaseUrl: h.services.config.databaseUrl,
          sqliteMmapMb: 0,
          secret: TEST_SECRET,
          postgresConnections: 1,
          slots: createSlotArena(),
        } satisfies ThreadData,
      });
      try {
        const answers: ThreadAnswer[] = [];
        worker.on('message', (a: ThreadAnswer) => answers.push(a));
        await until(() => answers.some((a) => a.id === 0), 10_000, 'the tsx-started thread to be ready', 20);
        worker.postMessage({ id: 1, job: firstPageJob(), shared: false } satisfies ThreadJob);
        await until(() => answers.some((a) => a.id === 1), 10_000, 'the page', 20);
        const answer = answers.find((a) => a.id === 1)!;
        assert.equal(answer.error, undefined);
        assert.equal(Buffer.from(answer.body!).toString('utf8'), (await raw('/api/v1/assets?limit=7')).body);
      } finally {
        await worker.terminate();
      }
    });
  });
}
