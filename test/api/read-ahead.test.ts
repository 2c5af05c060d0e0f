/**
 * Read-ahead of walks (ADR 17, on the event loop since ADR 25): when a request continues a walk
 * this process answered, the next page is read right after the response, and the next request takes it. A client must not
 * be able to tell, except by speed: the page read ahead is the same bytes as one read at request
 * time, and a commit in between makes the request read it again. SQLite proves a page current
 * by its data version, PostgreSQL by the snapshot the page was read in.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { correctRecord } from '../../src/actions/correct.js';
import type { Logger } from '../../src/logger.js';
import { filterDigest } from '../../src/read/list-query.js';
import { type PageBody, type PageJob, PageReader } from '../../src/read/pages.js';
import { pageKey, READ_AHEAD_TTL_MS, ReadAhead } from '../../src/read/read-ahead.js';
import { snapshotCurrency } from '../../src/store/dialects/postgres-reads.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { page, walkPages } from '../helpers/pages.js';
import { until } from '../helpers/processes.js';

for (const dialect of DIALECTS) {
  describe(`read-ahead of walks [${dialect}]`, () => {
    let h: Harness;
    let key: string;
    let workspace: string;
    /** Every page of a walk of assets at `limit`, as the bytes sent. */
    const walk = async (limit: number) => (await walkPages(h, key, '/api/v1/assets', limit)).map((p) => p.body);
    const readAhead = () => h.services.pages.readAhead;
    /** The first page of assets at `limit`, as the list route asks for it. */
    const pageJob = (limit: number): PageJob => ({
      workspaceId: workspace,
      register: 'assets',
      filters: {},
      searchWords: [],
      limit,
      digest: filterDigest({ search: undefined, updated_since: undefined }),
      issuedAt: h.clock(),
    });

    before(async () => {
      h = await createHarness(dialect);
      workspace = await h.workspace();
      ({ key } = await h.key(workspace));
    });
    after(() => h.close());

    it('a walk reads each next page ahead, and sends the same bytes as pages read at request time', async () => {
      const hitsBefore = readAhead().hits;
      const missesBefore = readAhead().misses;
      const walked = await walk(7);
      assert.ok(walked.length >= 5, 'the seeded register spans several pages');
      // Each page again, read at request time by a reader of the same queries without a currency.
      const plain = new PageReader(h.services.pages.queries, h.services.cursors);
      let at: PageJob['after'];
      for (const [i, body] of walked.entries()) {
        const alone = await plain.read({ ...pageJob(7), ...(at ? { after: at } : {}) });
        assert.equal(alone.body.toString('utf8'), body, `page ${i}`);
        const last = (JSON.parse(body) as { data: { updated_at: string; id: string }[] }).data.at(-1);
        at = last && { updatedAt: last.updated_at, id: last.id };
      }
      assert.equal(plain.readAhead.hits + plain.readAhead.misses, 0, 'without a currency nothing is read ahead');
      // Page 1 starts no read-ahead (a first page is not yet a walk); page 2 continues one and
      // reads page 3 ahead, and so on: every page from the third on was read ahead.
      if (dialect === 'sqlite') {
        assert.equal(readAhead().hits - hitsBefore, walked.length - 2, 'pages 3 and later came from read-ahead');
      } else {
        // A PostgreSQL snapshot moves with any transaction that writes anywhere in the cluster,
        // and the suite's other files write all the time: each page read ahead was taken or
        // refused, and which one is theirs to decide (the unit tests below pin both).
        assert.equal(
          readAhead().hits - hitsBefore + readAhead().misses - missesBefore,
          walked.length - 2,
          'pages 3 and later were read ahead',
        );
      }
    });

    it('the first page of an updated_since sync reads its second page ahead (a sync reads on until has_more is false)', async () => {
      const since = '2000-01-01T00:00:00.000Z';
      const sync = `/api/v1/assets?updated_since=${encodeURIComponent(since)}`;
      const reference = (await walkPages(h, key, sync, 6)).map((p) => p.body);
      assert.ok(reference.length >= 3, 'the sync spans several pages');
      const taken = () => (dialect === 'sqlite' ? readAhead().hits : readAhead().hits + readAhead().misses);
      const before = taken();
      const walked = (await walkPages(h, key, sync, 6)).map((p) => p.body);
      assert.deepEqual(walked, reference, 'the same bytes, page for page');
      // Every page after the first was read ahead: the second because the first started a sync.
      assert.equal(taken() - before, reference.length - 1, 'pages 2 and later came from read-ahead');
      // A first page without updated_since is not yet a walk: nothing is read ahead for it.
      const held = readAhead().size;
      // Whether a page is read ahead is decided before its response is sent (pages.ts), so by now.
      await page(h, key, '/api/v1/assets?limit=6');
      assert.equal(readAhead().size, held, 'a plain first page reads nothing ahead');
    });

    it('a commit after a page was read ahead (by any connection) makes its request read the page again and see the change', async () => {
      const p1 = await page(h, key, '/api/v1/assets?limit=4');
      const p2 = await page(h, key, `/api/v1/assets?limit=4&cursor=${encodeURIComponent(p1.next_cursor!)}`);
      await until(() => readAhead().size === 1, 10_000, 'page 3 read ahead', 10);
      const missesBefore = readAhead().misses;
      // The first 13 records as they are now (a first page: it neither takes nor starts a read-ahead).
      const expected = await page(h, key, '/api/v1/assets?limit=13');
      // The first record of page 3 is corrected: it moves to the end of the order.
      const moved = expected.data[8]!.id as string;
      await correctRecord(h.services, workspace, 'assets', moved, ['name=Corrected after the read-ahead']);
      const p3 = await page(h, key, `/api/v1/assets?limit=4&cursor=${encodeURIComponent(p2.next_cursor!)}`);
      assert.ok(!p3.data.some((r) => r.id === moved), 'the corrected record left page 3: the page was read after the commit');
      assert.deepEqual(
        p3.data.map((r) => r.id),
        expected.data.slice(9, 13).map((r) => r.id),
        'page 3 is the next four records after the commit',
      );
      assert.equal(readAhead().misses, missesBefore + 1, 'the page read ahead was refused as stale');
    });
  });
}

describe('ReadAhead (the bookkeeping, with a clock moved by hand)', () => {
  const job: PageJob = {
    workspaceId: 'ws_1',
    register: 'assets',
    filters: {},
    searchWords: [],
    limit: 2,
    digest: 'd',
    issuedAt: 0,
  };
  const body = (n: number): PageBody => ({ body: Buffer.alloc(n), next: { updatedAt: 'u', id: `x${n}` } });

  it(`a page read ahead is taken once, and not after ${READ_AHEAD_TTL_MS / 1000} s or once the data version moved`, async () => {
    let now = 0;
    let version = 1;
    const ra = new ReadAhead<PageJob, PageBody>({ kind: 'data-version', read: () => version }, () => now);
    const next = { updatedAt: '2026-01-01T00:00:00.000Z', id: 'ast_2' };
    const key = pageKey(job, next);
    assert.equal(ra.follows(key), false);
    ra.answered(job, next, async () => body(10));
    assert.equal(ra.follows(key), true, 'the next request continues a walk this process answered');
    assert.ok(await ra.take(key));
    assert.equal(ra.take(key), undefined, 'handed out once');

    ra.answered(job, next, async () => body(10));
    now += READ_AHEAD_TTL_MS + 1;
    assert.equal(await ra.take(key), undefined, 'too old');
    assert.equal(ra.follows(key), false);

    ra.answered(job, next, async () => body(10));
    version++;
    assert.equal(await ra.take(key), undefined, 'a commit since the read');
    assert.equal(ra.misses, 2);
    assert.equal(ra.hits, 1);
  });

  it('with snapshots, a page is taken only if the snapshot it was read in is the current one', async () => {
    let snapshot = '100:105:101,103';
    const ra = new ReadAhead<PageJob, PageBody>({ kind: 'snapshot', read: async () => snapshot }, () => 0);
    const next = { updatedAt: '2026-01-01T00:00:00.000Z', id: 'ast_2' };
    const key = pageKey(job, next);
    const asked: PageJob[] = [];
    const readIn = (snap: string | undefined) => async (j: PageJob) => {
      asked.push(j);
      return { ...body(10), ...(snap ? { snapshot: snap } : {}) };
    };
    ra.answered(job, next, readIn(snapshot));
    assert.equal(asked[0]?.withSnapshot, true, 'the page is asked for with its snapshot');
    assert.deepEqual(asked[0]?.after, next, 'the page after the one answered');
    assert.ok(await ra.take(key), 'same snapshot: taken');

    ra.answered(job, next, readIn(snapshot));
    snapshot = '100:106:101,103'; // a transaction that wrote since
    assert.equal(await ra.take(key), undefined, 'another snapshot: read again');

    ra.answered(job, next, readIn(undefined));
    assert.equal(await ra.take(key), undefined, 'a page without its snapshot (no rows) is never taken');

    ra.answered(job, next, async () => {
      throw new Error('the page statement failed');
    });
    assert.equal(await ra.take(key), undefined, 'a failed read is read again');
    assert.deepEqual([ra.hits, ra.misses], [1, 3]);
  });

  it('on a PostgreSQL without pg_current_snapshot() (before 13), the first failure turns read-ahead off, with one warning', async () => {
    const noSnapshot = Object.assign(new Error('function pg_current_snapshot() does not exist'), { code: '42883' });
    let asked = 0;
    const hot = {
      rows: async () => {
        asked++;
        throw noSnapshot;
      },
    };
    const warnings: unknown[] = [];
    const logger = { warn: (...args: unknown[]) => warnings.push(args) } as unknown as Logger;
    const currency = snapshotCurrency(hot, logger);
    const ra = new ReadAhead<PageJob, PageBody>(currency, () => 0);
    assert.equal(ra.enabled, true, 'usable until shown otherwise');
    const next = { updatedAt: '2026-01-01T00:00:00.000Z', id: 'ast_2' };
    ra.answered(job, next, async () => {
      throw new Error('the page statement failed too');
    });
    assert.equal(await ra.take(pageKey(job, next)), undefined, 'the page is read again');
    assert.equal(ra.enabled, false, 'and nothing is read ahead from then on');
    assert.equal(asked, 1);
    assert.equal(warnings.length, 1);

    // Any other failure (a lost connection, say) is a miss like any other and leaves read-ahead on.
    const flaky = snapshotCurrency({ rows: async () => Promise.reject(new Error('connection lost')) }, logger);
    const ra2 = new ReadAhead<PageJob, PageBody>(flaky, () => 0);
    ra2.answered(job, next, async () => body(10));
    assert.equal(await ra2.take(pageKey(job, next)), undefined);
    assert.equal(ra2.enabled, true);
    assert.equal(warnings.length, 1);
  });

  it('reads nothing ahead without a currency, and keys pages by everything that selects their bytes', () => {
    const ra = new ReadAhead<PageJob, PageBody>(undefined);
    let reads = 0;
    ra.answered(job, { updatedAt: 'u', id: 'i' }, async () => {
      reads++;
      return body(1);
    });
    assert.equal(reads, 0);
    const base = pageKey(job);
    for (const change of [{ workspaceId: 'ws_2' }, { register: 'people' }, { digest: 'e' }, { limit: 3 }]) {
      assert.notEqual(pageKey({ ...job, ...change }), base, JSON.stringify(change));
    }
    assert.equal(pageKey({ ...job, issuedAt: 99 }), base, 'the issue time does not select bytes');
    assert.equal(pageKey({ ...job, withSnapshot: true }), base, 'nor does asking for the snapshot');
  });
});
