/**
 * Moving a whole deployment (`wsops copy`, docs/guide/deploying.md, "Moving from SQLite to PostgreSQL"): a source
 * built through the real code paths, copied by the real CLI process into an empty database of
 * each dialect, then served from the target as the recipe says.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { verifySignature } from '@wsops/client';
import type { FastifyInstance } from 'fastify';
import { sql } from '#kysely';
import { listAudit, recordAudit } from '../../src/audit/audit.js';
import { loadConfig } from '../../src/config.js';
import { buildApp } from '../../src/http/app.js';
import { createServices, type Services } from '../../src/services.js';
import { addPasskey, issueChallenge } from '../../src/sign-in/passkeys.js';
import { createSession, loadSession } from '../../src/sign-in/sessions.js';
import { createAdminLink } from '../../src/sign-in/sign-in-links.js';
import { copyPlan, whyNotCopied } from '../../src/store/copy.js';
import { openDatabase, redactUrl } from '../../src/store/database.js';
import { migrate } from '../../src/store/migrate.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint, signingSecrets } from '../../src/webhooks/endpoints/endpoints.js';
import { emitEvents } from '../../src/webhooks/events/outbox.js';
import { type DeliveryPage, deliveryStats, listDeliveries } from '../../src/webhooks/queue/deliveries.js';
import { exportRecords, exportRegisters } from '../../src/writes/export.js';
import { importRecords } from '../../src/writes/import.js';
import { type TestClock, testClock } from '../helpers/clock.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.js';
import { createHarness, type Harness, TEST_SECRET } from '../helpers/harness.js';
import { BIN } from '../helpers/processes.js';
import { answer, Receiver } from '../helpers/receiver.js';

const HOUR = 3_600_000;
const GUIDE = readFileSync(new URL('../../docs/guide/deploying.md', import.meta.url), 'utf8');
const ASSET = { asset: { id: 'ast_x', asset_tag: 'AST-1', status: 'ASSIGNED' }, assigned_user_id: 'per_x', expected_return_at: null };
/** A password the PostgreSQL target's address carries (trust authentication ignores it); it must never be printed. */
const TARGET_PASSWORD = 'never-print-this-pw';

function wsops(args: string[], env: Record<string, string>, input?: string) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    env: { ...process.env, WSOPS_LOG_LEVEL: 'silent', ...env },
    encoding: 'utf8',
    input,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The target's address as an operator writes it: with a password when it is PostgreSQL. */
function withPassword(url: string): string {
  if (!url.startsWith('postgres')) return url;
  const u = new URL(url);
  u.password = TARGET_PASSWORD;
  return u.toString();
}

async function countAll(database: Services['database']): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const t of await copyPlan(database)) {
    const { rows } = await sql<{ n: number | string }>`SELECT count(*) AS n FROM ${sql.table(t.table)}`.execute(database.db);
    counts[t.table] = Number(rows[0]?.n);
  }
  return counts;
}

/** Every page of a list, as the API sent it (data and has_more; cursors are compared apart). */
async function walk(app: FastifyInstance, key: string, url: string, limit: number) {
  const pages: { data: unknown[]; has_more: boolean; next_cursor: string | null }[] = [];
  let cursor: string | null = null;
  do {
    const sep = url.includes('?') ? '&' : '?';
    const res: { statusCode: number; body: string } = await app.inject({
      url: `${url}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(res.statusCode, 200, res.body);
    const page = JSON.parse(res.body);
    pages.push(page);
    cursor = page.next_cursor;
  } while (cursor);
  return pages;
}

async function allDeliveries(services: Services, ws: string, endpointId: string) {
  const pages: DeliveryPage[] = [];
  let before: string | undefined;
  do {
    const page = await listDeliveries(services, ws, endpointId, { limit: 3, before });
    pages.push(page);
    before = page.next_before ?? undefined;
  } while (before);
  return pages;
}

/** A deployment served from an existing database, as `wsops serve` would build it. */
async function serveFrom(url: string, clock: TestClock, env: Record<string, string>) {
  const config = loadConfig({
    WSOPS_DATABASE_URL: url,
    WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true',
    WSOPS_RATE_LIMIT_PER_SECOND: '100000',
    WSOPS_RATE_LIMIT_BURST: '100000',
    ...env,
  });
  const services = await createServices(config, { clock });
  const app = buildApp(services);
  await app.ready();
  return {
    services,
    app,
    async close() {
      await app.close();
      await services.close();
    },
  };
}

const drain = async (dispatcher: Dispatcher) => {
  for (let n = await dispatcher.runOnce(); n > 0; n = await dispatcher.runOnce());
};

describe('the copy plans every table of the migrated schema from the schema itself', () => {
  for (const dialect of DIALECTS) {
    it(`[${dialect}] every table is copied or named as not copied, on a not-null key, after the tables it names`, async () => {
      const test = await createTestDatabase(dialect);
      const database = openDatabase(test.url);
      try {
        await migrate(database);
        const tables = await database.db.introspection.getTables();
        const plan = await copyPlan(database);
        const planned = new Map(plan.map((t) => [t.table as string, t]));
        const forgotten = tables.map((t) => t.name).filter((name) => !planned.has(name) && whyNotCopied(name) === undefined);
        assert.deepEqual(forgotten, [], 'every table of wsops is copied or named in whyNotCopied');
        for (const t of plan) {
          const table = tables.find((x) => x.name === t.table);
          assert.ok(table, `${t.table} is planned but not in the schema`);
          assert.ok(t.key.length > 0, `${t.table} has a copy key`);
          for (const col of t.key) {
            const column = table.columns.find((c) => c.name === col);
            assert.ok(column, `${t.table}.${col} (copy key) is a column`);
            // SQLite lets a TEXT PRIMARY KEY hold NULL (wsops never writes one; the count check would see a skipped row).
            if (dialect === 'postgres') assert.ok(!column.isNullable, `${t.table}.${col} (copy key) must be a not-null column`);
          }
        }
        assert.equal(planned.size, plan.length, 'each table once');
        const at = (table: string) => plan.findIndex((t) => t.table === table);
        // Parents before children: the foreign keys to workspaces, and the rollup after the attempts its trigger counts.
        for (const child of ['api_keys', 'webhook_endpoints', 'console_admins', 'alert_recipients'])
          assert.ok(at('workspaces') < at(child), `workspaces before ${child}`);
        assert.ok(at('delivery_attempts') < at('delivery_attempt_hours'), 'the attempts before their rollup');
        assert.equal(plan[at('delivery_attempt_hours')]?.replacesTriggerRows, true);
        // Both dialects plan the same tables in the same order on the same keys (a copy runs across them).
        const other = dialect === 'sqlite' ? 'postgres' : 'sqlite';
        if ((DIALECTS as readonly string[]).includes(other)) {
          const otherTest = await createTestDatabase(other as typeof dialect);
          const otherDatabase = openDatabase(otherTest.url);
          try {
            await migrate(otherDatabase);
            assert.deepEqual(await copyPlan(otherDatabase), plan);
          } finally {
            await otherDatabase.close();
            await otherTest.drop();
          }
        }
      } finally {
        await database.close();
        await test.drop();
      }
    });
  }
});

it('addresses are printed without their password, in the user part or a password parameter', () => {
  assert.equal(redactUrl('postgres://wsops:s3cr%2Ft@db:5432/wsops'), 'postgres://wsops:***@db:5432/wsops');
  assert.equal(
    redactUrl('postgres://wsops@db/wsops?sslmode=require&password=s3cret'),
    'postgres://wsops@db/wsops?sslmode=require&password=***',
  );
  assert.equal(redactUrl('postgres://db/wsops?PASSWORD=s3cret&x=1'), 'postgres://db/wsops?PASSWORD=***&x=1');
  assert.equal(redactUrl('sqlite:./data/wsops.db'), 'sqlite:./data/wsops.db');
});

for (const from of DIALECTS) {
  for (const to of DIALECTS) {
    // Across dialects the source runs on a generated master secret, as a week-old demo would, and
    // the test follows the recipe of docs/guide/deploying.md to the letter. Within one dialect WSOPS_SECRET is set.
    const recipe = from !== to;
    const title = recipe
      ? `The recipe "Moving from SQLite to PostgreSQL", end to end: ${from} -> ${to}`
      : `wsops copy with WSOPS_SECRET set: ${from} -> ${to}`;
    describe(title, () => {
      let h: Harness;
      let rx: Receiver;
      let target: TestDatabase;
      let served: Awaited<ReturnType<typeof serveFrom>> | undefined;
      /** The deployment served from the target after the copy. */
      const running = () => {
        assert.ok(served, 'the copy and the start of the target succeeded');
        return served;
      };
      let copy: ReturnType<typeof wsops>;
      let copied: {
        tables: Record<string, number>;
        total_rows: number;
        verified: boolean;
        target: string;
        master_secret: { source: string; note: string; value?: string };
      };
      let ws: string;
      let key: string;
      let otherKey: string;
      let endpoint: { id: string; secret: string };
      let session: { token: string };
      let storedSecret: string | undefined;
      const before_: {
        counts: Record<string, number>;
        owed: number;
        scopes: string;
        people: Awaited<ReturnType<typeof walk>>;
        assets: Awaited<ReturnType<typeof walk>>;
        otherLocations: Awaited<ReturnType<typeof walk>>;
        search: Awaited<ReturnType<typeof walk>>;
        searchUrl: string;
        stats24h: unknown;
        stats7d: unknown;
        deliveries: DeliveryPage[];
        audit: unknown[];
        passkeys: unknown[];
        challenges: unknown[];
      } = {} as never;

      before(async () => {
        h = await createHarness(from, { WSOPS_SECRET: recipe ? '' : TEST_SECRET, WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' });
        rx = await new Receiver().start();
        const db = h.services.database.db;
        ws = await h.workspace();
        const other = await h.workspace({ seed: false, modules: 'assets' });
        ({ key } = await h.key(ws));
        ({ key: otherKey } = await h.key(other, ['assets:read', 'locations:read']));
        // The same caller-chosen ids in two workspaces (ids are unique per workspace), and an import on record.
        const moved = await importRecords(h.services, other, exportRecords(h.services, ws, exportRegisters(['locations'])), {
          actor: 'operator',
        });
        assert.ok(moved.committed && moved.lines > 0, 'the locations were imported into the second workspace');
        const created = await createEndpoint(h.services, ws, { url: rx.url('/hook'), scopes: 'assets:read', events: 'asset.assigned' });
        endpoint = { id: created.id, secret: created.secret };
        const dispatcher = new Dispatcher(h.services, { random: () => 0 });
        const emit = (n: number) =>
          db.transaction().execute((trx) =>
            emitEvents(
              trx,
              ws,
              Array.from({ length: n }, () => ({ type: 'asset.assigned' as const, data: ASSET })),
              h.clock(),
            ),
          );
        await drain(dispatcher); // the verification: the endpoint is active
        await emit(3);
        await drain(dispatcher);
        h.clock.advance(HOUR);
        rx.on('/hook', answer(500));
        await emit(2);
        await drain(dispatcher); // failed once: owed, with a retry time
        rx.on('/hook', answer(200));
        await emit(2); // owed, never tried
        await dispatcher.stop();
        const link = await createAdminLink(h.services.database, {
          workspaceId: ws,
          email: 'ops@example.com',
          actor: 'cli',
          now: h.clock(),
        });
        session = await createSession(db, link.admin.id, h.clock());
        // A passkey (with the recovery codes a first factor brings) and an open passkey prompt.
        await addPasskey(db, {
          adminId: link.admin.id,
          workspaceId: ws,
          actor: 'cli',
          name: 'Desk key',
          passkey: { credentialId: 'Y3JlZGVudGlhbA', publicKey: 'cHVibGljLWtleQ', counter: 7, transports: ['usb', 'nfc'] },
          now: h.clock(),
        });
        await issueChallenge(db, {
          challenge: 'Y2hhbGxlbmdl',
          sessionId: 'session-of-the-prompt',
          purpose: 'sign-in',
          now: h.clock(),
          lifeMs: 300_000,
        });
        before_.passkeys = await db.selectFrom('admin_passkeys').selectAll().execute();
        before_.challenges = await db.selectFrom('webauthn_challenges').selectAll().execute();
        storedSecret = (await db.selectFrom('settings').select('value').where('name', '=', 'server_secret').executeTakeFirst())?.value;
        assert.equal(storedSecret !== undefined, recipe, 'a generated master secret is stored exactly when WSOPS_SECRET is unset');

        before_.scopes = (await h.get('/api/v1/scopes', key)).body;
        before_.people = await walk(h.app, key, '/api/v1/people', 40);
        before_.assets = await walk(h.app, key, '/api/v1/assets', 25);
        before_.otherLocations = await walk(h.app, otherKey, '/api/v1/locations', 10);
        const word = (
          await db.selectFrom('records').select('search_text').where('register', '=', 'people').executeTakeFirstOrThrow()
        ).search_text.split(' ')[0];
        before_.searchUrl = `/api/v1/people?search=${encodeURIComponent(word ?? '')}`;
        before_.search = await walk(h.app, key, before_.searchUrl, 5);
        assert.ok(before_.search[0]?.data.length, 'the search finds something');
        before_.stats24h = await deliveryStats(h.services, ws, endpoint.id, '24h');
        before_.stats7d = await deliveryStats(h.services, ws, endpoint.id, '7d');
        before_.deliveries = await allDeliveries(h.services, ws, endpoint.id);
        before_.audit = await listAudit(db, ws);
        before_.owed = Number(
          (
            await db
              .selectFrom('delivery_jobs')
              .select((eb) => eb.fn.countAll().as('n'))
              .where('state', '=', 'pending')
              .executeTakeFirstOrThrow()
          ).n,
        );
        assert.equal(before_.owed, 4, 'two deliveries that failed once and two never tried are owed');

        // 1. Stop the server (its last usage counts are written as it stops).
        await h.stop();
        const source = openDatabase(h.databaseUrl);
        before_.counts = await countAll(source);
        await source.close();
        assert.equal(before_.counts.settings, recipe ? 1 : 0, 'the generated master secret is the one setting');
        for (const table of ['workspaces', 'api_keys', 'api_usage', 'records', 'record_imports', 'webhook_endpoints', 'events']) {
          assert.ok((before_.counts[table] ?? 0) > 0, `the source has ${table} rows`);
        }
        for (const table of ['delivery_jobs', 'delivery_attempts', 'delivery_attempt_hours', 'console_admins', 'console_sign_in_links']) {
          assert.ok((before_.counts[table] ?? 0) > 0, `the source has ${table} rows`);
        }
        assert.ok((before_.counts.console_sessions ?? 0) > 0 && (before_.counts.audit_events ?? 0) > 0);
        for (const table of ['admin_passkeys', 'admin_recovery_codes', 'webauthn_challenges']) {
          assert.ok((before_.counts[table] ?? 0) > 0, `the source has ${table} rows`);
        }

        // 2. Copy into a new, empty database (small batches: many keyset pages per table).
        target = await createTestDatabase(to);
        const env = { WSOPS_DATABASE_URL: h.databaseUrl, WSOPS_SECRET: recipe ? '' : TEST_SECRET };
        // The command as the guide writes it (its addresses replaced), plus --json for the
        // assertions and small batches, so that every table takes many keyset pages.
        // The address, with its password, goes in on standard input: never in the arguments.
        const written = /^WSOPS_DATABASE_URL=sqlite:\S+ bin\/wsops (copy --to - --show-secret)$/m.exec(GUIDE)?.[1];
        assert.ok(written, 'the deploying guide recipe has its copy command, the target read from standard input');
        const args = written.split(' ');
        const typed = [...(recipe ? args : args.filter((a) => a !== '--show-secret')), '--batch-size', '7', '--json'];
        assert.ok(!typed.join(' ').includes(TARGET_PASSWORD));
        copy = wsops(typed, env, `${withPassword(target.url)}\n`);
        assert.equal(copy.status, 0, copy.stderr);
        copied = JSON.parse(copy.stdout);

        // 3. Set WSOPS_DATABASE_URL (and WSOPS_SECRET when it was generated), start.
        const secret = recipe ? (copied.master_secret.value ?? 'missing') : TEST_SECRET;
        served = await serveFrom(withPassword(target.url), testClock(h.clock()), { WSOPS_SECRET: secret });
      });

      after(async () => {
        await served?.close();
        await rx.stop();
        await h.close();
        await target?.drop();
      });

      it('copies every table, reports the counts per table, and the target holds exactly them', async () => {
        assert.equal(copied.verified, true);
        assert.deepEqual(copied.tables, before_.counts);
        assert.equal(
          copied.total_rows,
          Object.values(before_.counts).reduce((a, b) => a + b, 0),
        );
        assert.deepEqual(await countAll(running().services.database), before_.counts);
      });

      it('the admins’ passkeys are copied with every column (key, signature counter, transports, name), and open passkey prompts too', async () => {
        const db = running().services.database.db;
        assert.deepEqual(await db.selectFrom('admin_passkeys').selectAll().execute(), before_.passkeys);
        assert.deepEqual(await db.selectFrom('webauthn_challenges').selectAll().execute(), before_.challenges);
      });

      it('never prints the target password, nor the master secret unless asked', () => {
        const printed = copy.stdout + copy.stderr;
        assert.ok(!printed.includes(TARGET_PASSWORD), 'the target password is redacted');
        if (to === 'postgres') assert.match(copied.target, /:\*\*\*@/);
        if (recipe) {
          assert.equal(copied.master_secret.source, 'settings');
          assert.equal(copied.master_secret.value, storedSecret, '--show-secret prints the generated master secret');
          assert.match(copied.master_secret.note, /printed below/);
          assert.doesNotMatch(copied.master_secret.note, /or copy with --show-secret/, 'no advice to do what was just done');
        } else {
          assert.equal(copied.master_secret.source, 'WSOPS_SECRET');
          assert.ok(!printed.includes(TEST_SECRET));
          assert.equal(copied.master_secret.value, undefined);
        }
      });

      it('every old key authenticates against the new database, and lists and searches are identical page by page', async () => {
        const app = running().app;
        const scopes = await app.inject({ url: '/api/v1/scopes', headers: { authorization: `Bearer ${key}` } });
        assert.equal(scopes.statusCode, 200);
        assert.equal(scopes.body, before_.scopes);
        const other = await app.inject({ url: '/api/v1/scopes', headers: { authorization: `Bearer ${otherKey}` } });
        assert.equal(other.statusCode, 200, 'the second workspace key too');
        const strip = (pages: Awaited<ReturnType<typeof walk>>) => pages.map((p) => ({ data: p.data, has_more: p.has_more }));
        assert.deepEqual(strip(await walk(app, key, '/api/v1/people', 40)), strip(before_.people));
        assert.deepEqual(strip(await walk(app, key, '/api/v1/assets', 25)), strip(before_.assets));
        assert.deepEqual(
          strip(await walk(app, otherKey, '/api/v1/locations', 10)),
          strip(before_.otherLocations),
          'the same ids, other workspace',
        );
        assert.deepEqual(strip(await walk(app, key, before_.searchUrl, 5)), strip(before_.search), 'search works on the copied index');
        // A cursor the old deployment issued still reads the next page: the same master secret signs them.
        const cursor = before_.people[0]?.next_cursor as string;
        const next = await app.inject({
          url: `/api/v1/people?limit=40&cursor=${encodeURIComponent(cursor)}`,
          headers: { authorization: `Bearer ${key}` },
        });
        assert.equal(next.statusCode, 200, next.body);
        assert.deepEqual(JSON.parse(next.body).data, before_.people[1]?.data);
      });

      it("the console's delivery chart, delivery history and audit trail are the same; admins stay signed in", async () => {
        const services = running().services;
        assert.deepEqual(await deliveryStats(services, ws, endpoint.id, '24h'), before_.stats24h, 'no attempt counted twice');
        assert.deepEqual(await deliveryStats(services, ws, endpoint.id, '7d'), before_.stats7d);
        assert.deepEqual(await allDeliveries(services, ws, endpoint.id), before_.deliveries);
        assert.deepEqual(await listAudit(services.database.db, ws), before_.audit);
        const loaded = await loadSession(services.database.db, session.token, services.clock());
        assert.equal(loaded?.admin.email, 'ops@example.com');
      });

      it('the audit trail goes on after the copied entries (sequences advanced)', async () => {
        const db = running().services.database.db;
        const maxSeq = async () =>
          Number(
            (
              await db
                .selectFrom('audit_events')
                .select((eb) => eb.fn.max('seq').as('m'))
                .executeTakeFirstOrThrow()
            ).m,
          );
        const copiedMax = await maxSeq();
        await recordAudit(db, { workspaceId: ws, at: new Date().toISOString(), actor: 'cli', action: 'workspace.created' });
        assert.ok((await maxSeq()) > copiedMax);
      });

      it('the endpoint signs with the same secret, and the deliveries still owed are delivered from the new database', async () => {
        const services = running().services;
        const row = await services.database.db
          .selectFrom('webhook_endpoints')
          .selectAll()
          .where('id', '=', endpoint.id)
          .executeTakeFirstOrThrow();
        assert.deepEqual(signingSecrets(services, row, services.clock()), [endpoint.secret]);
        rx.received.length = 0;
        (services.clock as TestClock).advance(24 * HOUR); // the retries are due
        const dispatcher = new Dispatcher(services, { random: () => 0 });
        await drain(dispatcher);
        await dispatcher.stop();
        assert.equal(rx.received.length, before_.owed, 'each owed delivery once');
        for (const r of rx.received) {
          verifySignature(r.body, r.headers['x-service-signature'] as string, endpoint.secret, { now: services.clock() });
        }
      });

      it('a second copy into the now non-empty target is refused (one line, exit 2) and changes nothing', async () => {
        const database = running().services.database;
        const counts = await countAll(database);
        const again = wsops(['copy', '--to', withPassword(target.url)], {
          WSOPS_DATABASE_URL: h.databaseUrl,
          WSOPS_SECRET: recipe ? '' : TEST_SECRET,
        });
        assert.equal(again.status, 2, again.stderr);
        assert.match(again.stderr, /target database is not empty/);
        assert.equal(again.stderr.trim().split('\n').length, 1, again.stderr);
        assert.equal(again.stdout, '');
        assert.ok(!again.stderr.includes(TARGET_PASSWORD));
        assert.deepEqual(await countAll(database), counts);
      });
    });
  }
}

for (const dialect of DIALECTS) {
  describe(`wsops copy refusals and failures [${dialect}]`, () => {
    let source: TestDatabase;
    const env = () => ({ WSOPS_DATABASE_URL: source.url, WSOPS_SECRET: TEST_SECRET });
    before(async () => {
      source = await createTestDatabase(dialect);
      const created = wsops(['workspace', 'create', '--name', 'Acme'], env());
      assert.equal(created.status, 0, created.stderr);
    });
    after(() => source.drop());

    for (const [label, args, pattern] of [
      ['no --to', ['copy'], /--to is required.*--to - reads it from standard input, --to-env NAME/],
      ['--to - with nothing on standard input', ['copy', '--to', '-'], /--to - reads the secret from standard input, which was empty/],
      ['--to-env naming an unset variable', ['copy', '--to-env', 'WSOPS_TEST_UNSET_TARGET'], /WSOPS_TEST_UNSET_TARGET is not set or empty/],
      ['both --to and --to-env', ['copy', '--to', 'sqlite:/tmp/never-created.db', '--to-env', 'X'], /either as --to or as --to-env/],
      ['not a database address', ['copy', '--to', 'mysql://db/x'], /--to must be sqlite:PATH or postgres:\/\//],
      ['the configured database itself', ['copy', '--to', 'SOURCE'], /--to names the configured database/],
      ['a batch size of 0', ['copy', '--to', 'sqlite:/tmp/never-created.db', '--batch-size', '0'], /--batch-size must be a whole number/],
    ] as const) {
      it(`wrong arguments print a one-line reason and exit 2: ${label}`, () => {
        const r = wsops(
          args.map((a) => (a === 'SOURCE' ? source.url : a)),
          env(),
        );
        assert.equal(r.status, 2, r.stderr);
        assert.match(r.stderr, pattern);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
        assert.equal(r.stdout, '');
      });
    }

    for (const to of DIALECTS) {
      it(`to ${to}, the address taken from an environment variable (--to-env), out of the arguments`, async () => {
        const target = await createTestDatabase(to);
        try {
          const r = wsops(['copy', '--to-env', 'WSOPS_COPY_TO', '--json'], { ...env(), WSOPS_COPY_TO: withPassword(target.url) });
          assert.equal(r.status, 0, r.stderr);
          const out = JSON.parse(r.stdout);
          assert.equal(out.verified, true);
          assert.equal(out.tables.workspaces, 1);
          assert.ok(!(r.stdout + r.stderr).includes(TARGET_PASSWORD), 'the password is never printed');
        } finally {
          await target.drop();
        }
      });

      it(`a ${to} target holding another application's table is refused and left as it was`, async () => {
        const target = await createTestDatabase(to);
        const database = openDatabase(target.url);
        try {
          await sql`CREATE TABLE invoices (id integer)`.execute(database.db);
          const r = wsops(['copy', '--to', target.url], env());
          assert.equal(r.status, 2, r.stderr);
          assert.match(r.stderr, /holds tables wsops does not know \(invoices\)/);
          const tables = (await database.db.introspection.getTables()).map((t) => t.name);
          assert.deepEqual(tables, ['invoices'], 'not migrated, nothing written');
        } finally {
          await database.close();
          await target.drop();
        }
      });

      it(`to ${to}, with WSOPS_SECRET set: says to keep the same WSOPS_SECRET and never prints it`, async () => {
        const target = await createTestDatabase(to);
        try {
          const r = wsops(['copy', '--to', target.url, '--show-secret'], env());
          assert.equal(r.status, 0, r.stderr);
          assert.match(r.stdout, /copied \d+ rows .* the counts of every table match/);
          assert.match(r.stdout, /start the new deployment with the same WSOPS_SECRET/);
          assert.ok(!(r.stdout + r.stderr).includes(TEST_SECRET), 'WSOPS_SECRET itself is never printed');
        } finally {
          await target.drop();
        }
      });
    }

    it('a source without a workspace (a wrong WSOPS_DATABASE_URL) is refused with one line, exit 2', async () => {
      const empty = await createTestDatabase(dialect);
      const target = await createTestDatabase('sqlite');
      try {
        const r = wsops(['copy', '--to', target.url], { WSOPS_DATABASE_URL: empty.url, WSOPS_SECRET: TEST_SECRET });
        assert.equal(r.status, 2, r.stderr);
        assert.match(r.stderr, /holds no workspace: nothing to copy; check WSOPS_DATABASE_URL/);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      } finally {
        await empty.drop();
        await target.drop();
      }
    });

    it('a target that loses rows during the copy fails the verification: one line naming the table, exit 1', async () => {
      const target = await createTestDatabase('sqlite');
      const database = openDatabase(target.url);
      try {
        // A migrated, empty target (allowed) whose trigger drops every workspace written to it.
        await migrate(database);
        await sql`CREATE TRIGGER lose_workspaces AFTER INSERT ON workspaces BEGIN DELETE FROM workspaces WHERE id = NEW.id; END`.execute(
          database.db,
        );
        const r = wsops(['copy', '--to', target.url], env());
        assert.equal(r.status, 1, r.stderr);
        assert.match(r.stderr, /^wsops: copy failed: the copy is incomplete: workspaces has 0 rows in the target and 1 in the source/);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
        assert.equal(r.stdout, '');
      } finally {
        await database.close();
        await target.drop();
      }
    });

    if (dialect === 'sqlite' && DIALECTS.includes('postgres')) {
      it('a value PostgreSQL cannot hold (NUL in a SQLite text) stops the copy: one line naming the table, exit 1', async () => {
        const hostile = await createTestDatabase('sqlite');
        const target = await createTestDatabase('postgres');
        const database = openDatabase(hostile.url);
        try {
          const made = wsops(['workspace', 'create', '--name', 'Nul', '--json'], {
            WSOPS_DATABASE_URL: hostile.url,
            WSOPS_SECRET: TEST_SECRET,
          });
          const id = JSON.parse(made.stdout).id;
          // Written by plain SQL, as a hand-edited database could hold it.
          await sql`INSERT INTO settings (name, value) VALUES ('note', ${`a\u0000b`})`.execute(database.db);
          const r = wsops(['copy', '--to', target.url], { WSOPS_DATABASE_URL: hostile.url, WSOPS_SECRET: TEST_SECRET });
          assert.equal(r.status, 1, r.stderr);
          assert.match(r.stderr, /^wsops: copy failed: the copy stopped in settings: .*The target holds part of the copy/);
          assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
          assert.ok(id);
        } finally {
          await database.close();
          await hostile.drop();
          await target.drop();
        }
      });
    }

    it('a target that cannot be reached fails with one line, exit 1, and no password', () => {
      const r = wsops(['copy', '--to', `postgres://postgres:${TARGET_PASSWORD}@127.0.0.1:1/nowhere`], env());
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, /^wsops: copy failed: /);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.ok(!r.stderr.includes(TARGET_PASSWORD));
    });
  });
}
