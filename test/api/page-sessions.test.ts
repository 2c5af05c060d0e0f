/**
 * The PostgreSQL sessions that read list pages (ADR 18): pages without a text search keep one generic
 * plan (PostgreSQL's plan cache would otherwise plan every execution again, about 0.1 ms of the
 * database per page), while text searches, whose best plan depends on their words, are planned
 * for their words as PostgreSQL usually does. Counted by PostgreSQL itself (pg_prepared_statements).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it, mock } from 'node:test';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { registerByPath } from '../../src/registers/catalogue.js';
import { type PageSessions, PostgresPages, pageSessions } from '../../src/store/dialects/postgres-reads.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { ROOT, until } from '../helpers/processes.js';

describe('page sessions on PostgreSQL [postgres]', { skip: !DIALECTS.includes('postgres') }, () => {
  let h: Harness;
  let workspace: string;
  let sessions: PageSessions;
  const assets = registerByPath('assets');
  if (!assets) throw new Error('no assets register');

  const warnings: string[] = [];
  /** What the test's page sessions log (a lost idle session is a warning). */
  const lost: string[] = [];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);

  before(async () => {
    process.on('warning', onWarning);
    h = await createHarness('postgres');
    workspace = await h.workspace();
    // One session each, so the statistics read below are those of the session that ran the pages.
    sessions = pageSessions(h.databaseUrl, 1, undefined, pino({ level: 'warn' }, { write: (line: string) => void lost.push(line) }));
  });
  after(async () => {
    process.off('warning', onWarning);
    await sessions.close();
    await h.close();
  });

  const pages = (on: PageSessions) => new PostgresPages(on);

  /** How PostgreSQL planned the session's prepared statement whose text starts with `prefix`. */
  const plans = async (on: PageSessions['pages'], prefix: string) => {
    const rows = await on.rows('SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE ?', [`${prefix}%`]);
    assert.equal(rows.length, 1, `one prepared statement starting "${prefix}"`);
    const [generic, custom] = rows[0] as [string | number, string | number];
    return { generic: Number(generic), custom: Number(custom) };
  };

  it('a page without a text search runs on its generic plan from the first execution: it is never planned again', async () => {
    const pages = new PostgresPages(sessions);
    let after: { updatedAt: string; id: string } | undefined;
    for (let i = 0; i < 8; i++) {
      const page = await pages.listPage({ workspaceId: workspace, register: assets, filters: {}, searchWords: [], limit: 2, after });
      assert.ok(page.last, 'the seeded workspace has more than 16 assets');
      after = page.last;
    }
    assert.deepEqual(
      await plans(sessions.pages, 'SELECT id, updated_at, doc FROM records WHERE workspace_id = $1 AND register = $2 AND (updated_at'),
      { generic: 7, custom: 0 },
      'pages 2 to 8 (the first page, which has no position, is a statement of its own)',
    );
  });

  it('a page with a text search is planned for its words, on sessions of its own', async () => {
    const pages = new PostgresPages(sessions);
    for (let i = 0; i < 6; i++) {
      await pages.listPage({ workspaceId: workspace, register: assets, filters: {}, searchWords: ['laptop'], limit: 2 });
    }
    const search = await plans(
      sessions.searches,
      'SELECT id, updated_at, doc FROM records WHERE workspace_id = $1 AND register = $2 AND array_to_tsvector',
    );
    // PostgreSQL's own rule: the first five executions are always planned for their values.
    assert.ok(search.custom >= 5, `planned for its words (${JSON.stringify(search)})`);
    // (The statement that counts is itself prepared on that session: it does not start like a page.)
    const onPages = await sessions.pages.rows(
      "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE 'SELECT id, updated_at, doc FROM records%' AND strpos(statement, 'tsvector') > 0",
      [],
    );
    assert.equal(Number(onPages[0]?.[0]), 0, 'no search ran on the generic-plan sessions');
  });

  it('the API process reads its pages on generic-plan sessions; their searches on the main pool', async () => {
    const { key } = await h.key(workspace);
    let url = '/api/v1/assets?limit=2';
    for (let i = 0; i < 8; i++) {
      const res = await h.get(url, key);
      assert.equal(res.status, 200, res.body);
      url = `/api/v1/assets?limit=2&cursor=${encodeURIComponent(res.json.next_cursor)}`;
    }
    const queries = h.services.pages.queries as PostgresPages;
    // Pages one after another reuse the pool's most recently released session, so the
    // statements' counts are those of the one session that ran them. Pages 2 to 8 continue the
    // walk: each was read at request time, or ahead with its snapshot (read-ahead.ts), or both
    // (a page read ahead is read again when PostgreSQL's snapshot moved, which the other test
    // files' writes do at any time).
    const rows = await queries.sessions.pages.rows(
      'SELECT sum(generic_plans), sum(custom_plans) FROM pg_prepared_statements WHERE statement LIKE ? OR statement LIKE ?',
      [
        'SELECT id, updated_at, doc FROM records WHERE workspace_id = $1 AND register = $2 AND (updated_at%',
        'SELECT id, updated_at, doc, (SELECT pg_current_snapshot()::text) FROM records WHERE workspace_id = $1 AND register = $2 AND (updated_at%',
      ],
    );
    const [generic, custom] = (rows[0] as [string, string]).map(Number) as [number, number];
    assert.equal(custom, 0, 'never planned for its values');
    assert.ok(generic >= 7, `${generic} executions of the generic plan for pages 2 to 8`);
    assert.equal(queries.sessions.searches, h.services.hot, 'searches on the event loop run on the main pool');
    const res = await h.get('/api/v1/assets?limit=2&search=laptop', key);
    assert.equal(res.status, 200, res.body);
  });

  it('a page session ended under the server (PostgreSQL restarted, an administrator) is replaced: the next pages are served', async () => {
    const { key } = await h.key(workspace);
    assert.equal((await h.get('/api/v1/assets?limit=2', key)).status, 200);
    await pages(sessions).listPage({ workspaceId: workspace, register: assets, filters: {}, searchWords: [], limit: 2 });
    const ended = await h.services.hot.rows(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name IN ('wsops-pages', 'wsops-searches')",
      [],
    );
    assert.ok(ended.length >= 2, `ended the idle page sessions (${ended.length})`);
    // Idle sessions that end make their pool emit 'error': unheard, that would end the process.
    await until(() => lost.some((line) => line.includes('idle PostgreSQL connection lost')), 10_000, "the pool's lost-session warning", 10);
    for (let i = 0; i < 3; i++) {
      assert.equal((await h.get('/api/v1/assets?limit=2', key)).status, 200);
      const page = await pages(sessions).listPage({ workspaceId: workspace, register: assets, filters: {}, searchWords: [], limit: 2 });
      assert.ok(page.last, 'a page of 2 with more after it');
    }
  });

  it("a page session outlives a lull: after more than pg's 10 s idle timeout the next page runs on the same session", async () => {
    const backend = async () => Number((await sessions.pages.rows('SELECT pg_backend_pid()', []))[0]?.[0]);
    // pg's pool closes a session idle for 10 s (its default) with a timer it sets when the
    // session goes idle: the next burst would then pay new backends, with cold catalog caches,
    // and prepare every page statement again. The lull is mocked time, so that timer, were it
    // set, fires at once.
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      await pages(sessions).listPage({ workspaceId: workspace, register: assets, filters: {}, searchWords: [], limit: 2 });
      const before = await backend();
      mock.timers.tick(10_500);
      await pages(sessions).listPage({ workspaceId: workspace, register: assets, filters: {}, searchWords: [], limit: 2 });
      assert.equal(await backend(), before, 'the same backend: the session was kept');
    } finally {
      mock.timers.reset();
    }
  });

  it('idle page sessions do not keep a process alive: one that forgot to close them still exits', async () => {
    const script = `import { pageSessions } from './src/store/dialects/postgres-reads.ts';
      const s = pageSessions(process.env.URL, 1);
      await s.pages.rows('SELECT 1', []);
      console.log('read');`;
    // Without allowExitOnIdle the kept session would hold the event loop open, and this would time out.
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: ROOT,
      env: { ...process.env, URL: h.databaseUrl },
      timeout: 20_000,
    });
    assert.equal(stdout.trim(), 'read');
  });

  it('a page session is set up before its first page: generic plans, no JIT, and no query queued behind the setup', async () => {
    const fresh = pageSessions(h.databaseUrl, 1);
    try {
      // The first statement on a new session: it must already see the settings.
      const [row] = await fresh.pages.rows("SELECT current_setting('plan_cache_mode'), current_setting('jit')", []);
      assert.deepEqual(row, ['force_generic_plan', 'off']);
      const [auto] = await fresh.searches.rows("SELECT current_setting('plan_cache_mode')", []);
      assert.deepEqual(auto, ['auto'], 'search sessions keep the usual plan choice');
    } finally {
      await fresh.close();
    }
    // pg 8 warns when a query is queued on a client still executing another (it stops working in pg 9).
    assert.deepEqual(
      warnings.filter((w) => w.includes('already executing')),
      [],
    );
  });
});
