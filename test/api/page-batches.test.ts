/**
 * Pages that wait for PostgreSQL together are read in one statement (ADR 19, PageBatches in postgres-reads.ts):
 * each page still gets exactly the rows it gets when read alone; pages of other statements or
 * LIMITs are never joined; a slow statement does not hold back the pages behind it; a failure
 * fails only the pages of its own statement.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { registerByPath } from '../../src/registers/catalogue.js';
import { seedRegister } from '../../src/seed/seed.js';
import {
  type BatchablePage,
  PageBatches,
  type PageSessions,
  PostgresPages,
  pageSessions,
} from '../../src/store/dialects/postgres-reads.js';
import type { ListQuery, PageRows } from '../../src/store/page-queries.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const assets = registerByPath('assets');
if (!assets) throw new Error('no assets register');

describe('batched pages on PostgreSQL [postgres]', { skip: !DIALECTS.includes('postgres') }, () => {
  let h: Harness;
  let workspace: string;
  let other: string;
  let sessions: PageSessions;

  before(async () => {
    h = await createHarness('postgres');
    workspace = await h.workspace({ seed: false });
    other = await h.workspace({ seed: false });
    await seedRegister(h.services, workspace, 'assets', 400, { seed: 'batches', now: h.clock() });
    await seedRegister(h.services, other, 'assets', 120, { seed: 'other', now: h.clock() });
    // One session: the statements counted below are those of the session that ran the pages.
    sessions = pageSessions(h.databaseUrl, 1);
  });
  after(async () => {
    await sessions.close();
    await h.close();
  });

  const query = (q: Partial<ListQuery>): ListQuery => ({
    workspaceId: workspace,
    register: assets,
    filters: {},
    searchWords: [],
    limit: 7,
    ...q,
  });

  /** Every position of a walk of `q`, read one page at a time. */
  async function positions(q: ListQuery): Promise<(ListQuery['after'] | undefined)[]> {
    const pages = new PostgresPages(sessions);
    const found: (ListQuery['after'] | undefined)[] = [undefined];
    let at: ListQuery['after'] | undefined;
    do {
      at = (await pages.listPage({ ...q, after: at })).last;
      if (at) found.push(at);
    } while (at);
    return found;
  }

  const comparable = (p: PageRows) => ({
    documents: [...(p.documents as string[])],
    last: p.last,
    hasMore: p.hasMore,
    snapshot: p.snapshot !== undefined,
  });

  it('pages that wait together get exactly the rows each gets alone, in fewer statements than pages', async () => {
    const shapes: ListQuery[] = [
      query({}),
      query({ limit: 13 }),
      query({ filters: { status: 'in_use' } }),
      // The same statement as the line above, so it joins its batches: a value that must survive
      // the trip through a PostgreSQL array literal (quotes, backslash, comma, braces, NULL, non-ASCII).
      query({ filters: { status: 'x"y\\z,{}' } }),
      query({ filters: { status: 'NULL' } }),
      query({ filters: { status: 'Zoë' } }),
      query({ workspaceId: other }),
      query({ withSnapshot: true }),
      query({ updatedSince: '2000-01-01T00:00:00.000Z' }),
    ];
    const jobs: ListQuery[] = [];
    for (const shape of shapes) for (const at of await positions(shape)) jobs.push({ ...shape, ...(at ? { after: at } : {}) });
    assert.ok(jobs.length > 150, `${jobs.length} pages`);

    const alone = new PostgresPages(sessions);
    const expected: ReturnType<typeof comparable>[] = [];
    for (const job of jobs) expected.push(comparable(await alone.listPage(job)));
    const count = async () => {
      const rows = await sessions.pages.rows(
        "SELECT coalesce(sum(generic_plans + custom_plans), 0) FROM pg_prepared_statements WHERE statement LIKE 'SELECT p.id, p.updated_at%'",
        [],
      );
      return Number(rows[0]?.[0]);
    };
    const batchesBefore = await count();

    const together = new PostgresPages(sessions);
    // Shuffled, so that the pages of each shape arrive among the others'.
    const order = jobs.map((_, i) => i).sort((a, b) => ((a * 7919) % 101) - ((b * 7919) % 101));
    const got = await Promise.all(order.map((i) => together.listPage(jobs[i] as ListQuery)));
    for (const [k, i] of order.entries()) assert.deepEqual(comparable(got[k] as PageRows), expected[i], `page ${i}`);

    const batches = (await count()) - batchesBefore;
    assert.ok(batches >= 1 && batches < jobs.length / 4, `${jobs.length} pages read in ${batches} batched statements (and 2 alone)`);
  });

  it("a batch's values reach PostgreSQL intact through its arrays, whatever they hold", async () => {
    const values = ['x"y\\z,{}', 'NULL', 'null', '', ' spaced ', 'Zoë 東京', "it's", '{"a":1}', 'a\nb'];
    const rows = await sessions.pages.rows('SELECT v FROM unnest(CAST(? AS text[])) AS v', [values]);
    assert.deepEqual(
      rows.map((r) => r[0]),
      values,
    );
  });

  it('a page alone, with a slot free, runs its own statement: a single walk is unchanged', async () => {
    const pages = new PostgresPages(sessions);
    const before = await sessions.pages.rows(
      "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE 'SELECT p.id, p.updated_at%' AND statement LIKE '%LIMIT $6) p'",
      [],
    );
    for (const at of (await positions(query({ limit: 50 }))).slice(0, 5))
      await pages.listPage(query({ limit: 50, ...(at ? { after: at } : {}) }));
    const after = await sessions.pages.rows(
      "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE 'SELECT p.id, p.updated_at%' AND statement LIKE '%LIMIT $6) p'",
      [],
    );
    assert.deepEqual(after, before);
  });
});

describe('batched pages: waiting, joining and failing (a stand-in database)', () => {
  const TEXT =
    'SELECT id, updated_at, doc FROM records WHERE workspace_id = ? AND register = ? AND (updated_at, id) > (?, ?) ORDER BY updated_at, id LIMIT ?';
  const OTHER =
    'SELECT id, updated_at, doc FROM records WHERE workspace_id = ? AND register = ? AND status = ? AND (updated_at, id) > (?, ?) ORDER BY updated_at, id LIMIT ?';
  type Call = { text: string; params: readonly unknown[] };

  /** A page as postgres-reads.ts hands it over: `params` are its values, then its LIMIT. */
  const page = (text: string, params: readonly (string | number)[]): BatchablePage => ({
    text,
    values: params.slice(0, -1) as string[],
    limit: params.at(-1) as number,
    batchText: () => `SELECT p.id, p.updated_at, p.doc, b.n FROM (${text}) p`,
  });

  /** A promise that stays pending until `open()`: a statement the test holds. */
  function gate(): { closed: Promise<void>; open: () => void } {
    let open: () => void = () => {};
    const closed = new Promise<void>((resolve) => {
      open = resolve;
    });
    return { closed, open };
  }

  /** Answers each page statement with one row naming its position; a batch with one row per page. */
  function standIn(hold?: (call: Call) => Promise<void> | undefined) {
    const calls: Call[] = [];
    return {
      calls,
      rows: async (text: string, params: readonly unknown[]): Promise<unknown[][]> => {
        const call = { text, params };
        calls.push(call);
        await (hold?.(call) ?? Promise.resolve());
        if (text.startsWith('SELECT p.id')) {
          const ids = params[3] as string[];
          if (ids.includes('fail')) throw new Error('the batch failed');
          return ids.map((id, i) => [id, 'u', `doc of ${id}`, String(i + 1)]);
        }
        if (params[3] === 'fail' || params[4] === 'fail') throw new Error('the page failed');
        return [[String(params[params.length - 2]), 'u', `doc of ${params[params.length - 2]}`]];
      },
    };
  }

  it('joins only pages of the same statement and LIMIT, in arrival order', async () => {
    const db = standIn();
    const batches = new PageBatches(db, 1);
    const pages = [
      batches.rows(page(TEXT, ['w', 'assets', 'u', 'a', 8])),
      batches.rows(page(TEXT, ['w', 'assets', 'u', 'b', 8])),
      batches.rows(page(OTHER, ['w', 'assets', 'lost', 'u', 'c', 8])),
      batches.rows(page(TEXT, ['w', 'assets', 'u', 'd', 101])),
      batches.rows(page(TEXT, ['w2', 'assets', 'u', 'e', 8])),
    ];
    const rows = await Promise.all(pages);
    assert.deepEqual(
      rows.map((r) => r.map((row) => row[2])),
      [['doc of a'], ['doc of b'], ['doc of c'], ['doc of d'], ['doc of e']],
    );
    assert.deepEqual(
      db.calls.map((c) => (c.text.startsWith('SELECT p.id') ? `batch ${(c.params[3] as string[]).join('')}` : `alone ${c.params.at(-2)}`)),
      ['alone a', 'batch be', 'alone c', 'alone d'],
      'a went alone (nothing was waiting); b and e (same text and LIMIT, other workspace) joined; c and d did not',
    );
  });

  it('a slow statement does not hold back the pages behind it', async () => {
    const slow = gate();
    const db = standIn((call) => (call.params[3] === 'slow' ? slow.closed : undefined));
    const batches = new PageBatches(db, 1);
    let slowDone = false;
    const first = batches.rows(page(TEXT, ['w', 'assets', 'u', 'slow', 8])).then(() => {
      slowDone = true;
    });
    const behind = await batches.rows(page(TEXT, ['w', 'assets', 'u', 'next', 8]));
    assert.deepEqual(behind, [['next', 'u', 'doc of next']]);
    assert.equal(slowDone, false, 'served while the slow statement still ran');
    slow.open();
    await first;
  });

  it('a failing statement fails its own pages only; the pages after it are read', async () => {
    const held = gate();
    const db = standIn((call) => (call.params[3] === 'first' ? held.closed : undefined));
    const batches = new PageBatches(db, 1);
    const first = batches.rows(page(TEXT, ['w', 'assets', 'u', 'first', 8]));
    const failing = [batches.rows(page(TEXT, ['w', 'assets', 'u', 'x', 8])), batches.rows(page(TEXT, ['w', 'assets', 'u', 'fail', 8]))];
    const other = batches.rows(page(OTHER, ['w', 'assets', 'lost', 'u', 'y', 8]));
    held.open();
    await first;
    for (const p of failing) await assert.rejects(p, /the batch failed/);
    assert.deepEqual(await other, [['y', 'u', 'doc of y']]);
    assert.deepEqual(await batches.rows(page(TEXT, ['w', 'assets', 'u', 'z', 8])), [['z', 'u', 'doc of z']]);
  });
});
