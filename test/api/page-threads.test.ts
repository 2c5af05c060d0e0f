/**
 * Page threads (ADR 16): `wsops serve` reads list pages on WSOPS_PAGE_THREADS worker threads.
 * A client must not be able to tell: a page from a thread is the same bytes as one read on the
 * event loop (every query shape, every content coding), and a thread that exits with pages in
 * flight loses none of them: they are read on the event loop and the thread is started again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { filterDigest } from '../../src/api/cursor.js';
import type { PageJob } from '../../src/api/page-body.js';
import { pageThreadModule } from '../../src/api/page-thread-code.js';
import type { ThreadAnswer, ThreadJob } from '../../src/api/page-threads.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness, TEST_SECRET } from '../helpers/harness.js';
import { until } from '../helpers/processes.js';

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
      await h.services.startPageThreads();
      await until(() => h.services.pages.readyThreads >= 1, 10_000, 'a ready thread', 20);
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

    it('when bundling fails, a thread starts through tsx instead, and its pages are the same bytes', async () => {
      const { url, bundleError } = await pageThreadModule(async () => {
        throw new Error('esbuild is not installed');
      });
      assert.equal(bundleError, 'esbuild is not installed');
      assert.match(url.href, /page-thread-entry\.mjs$/);
      const worker = new Worker(url, {
        workerData: { databaseUrl: h.services.config.databaseUrl, sqliteMmapMb: 0, secret: TEST_SECRET, postgresConnections: 1 },
      });
      try {
        const answers: ThreadAnswer[] = [];
        worker.on('message', (a: ThreadAnswer) => answers.push(a));
        await until(() => answers.some((a) => a.id === 0), 10_000, 'the tsx-started thread to be ready', 20);
        const job: PageJob = {
          workspaceId: workspace,
          register: 'assets',
          filters: {},
          searchWords: [],
          limit: 7,
          digest: filterDigest({ search: undefined, updated_since: undefined }),
          issuedAt: h.clock(),
          coding: 'identity',
        };
        worker.postMessage({ id: 1, job } satisfies ThreadJob);
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
