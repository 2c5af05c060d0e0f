/**
 * The key cache (ADR 14). Two real `wsops serve --only api` processes share one database; their
 * caches are warmed (their metrics prove the requests were answered from the cache), then every
 * change that affects admission, made by the CLI, by this test process (a third process), in
 * plain SQL, or through one process's console, must be seen on the very next request to EACH
 * process. On PostgreSQL the cache is also proved to be bypassed while a process's LISTEN
 * session is down. In one process, with the injected clock: last use keeps moving forward
 * through cached entries, and the cache's own rules (no stale store after an invalidation,
 * unknown keys never cached, bound, TTL).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { sql } from '#kysely';
import { loadConfig } from '../../src/config.js';
import { KeyCache } from '../../src/keys/key-cache.js';
import { hashSecret } from '../../src/keys/key-hashing.js';
import type { AuthRow } from '../../src/keys/key-lookup.js';
import { createKey, revokeKey } from '../../src/keys/keys.js';
import { READ_SCOPES } from '../../src/registers/define.js';
import { seedWorkspace } from '../../src/seed/seed.js';
import { createServices, type Services } from '../../src/services.js';
import { loadSession } from '../../src/sign-in/sessions.js';
import { createAdminLink } from '../../src/sign-in/sign-in-links.js';
import { createWorkspace, parseModules, setModule } from '../../src/workspaces/workspaces.js';
import { encodeForm, TEST_PASSWORD } from '../helpers/console.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.js';
import { createHarness, type Harness, TEST_SECRET } from '../helpers/harness.js';
import { freePort, type Running, runWsops, startWsops, until, waitFor } from '../helpers/processes.js';

interface Lookups {
  hit: number;
  miss: number;
  bypass: number;
  invalidations: number;
  trusted: number;
}

interface ApiProcess {
  name: string;
  running: Running;
  base: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  get(path: string, key: string): Promise<{ status: number; json: any }>;
  /** The process's key cache counters, from its /metrics. */
  lookups(): Promise<Lookups>;
}

async function startApi(name: string, databaseUrl: string): Promise<ApiProcess> {
  const port = await freePort();
  const internalPort = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const running = startWsops(['serve', '--only', 'api', '--port', String(port)], {
    WSOPS_DATABASE_URL: databaseUrl,
    WSOPS_SECRET: TEST_SECRET,
    WSOPS_BASE_URL: base,
    WSOPS_INTERNAL_PORT: String(internalPort),
    WSOPS_LOG_LEVEL: 'warn',
    WSOPS_RATE_LIMIT_PER_SECOND: '100000',
    WSOPS_RATE_LIMIT_BURST: '100000',
    // Every revoked key's 401 counts against this address's failed-authentication budget.
    WSOPS_AUTH_FAILURES_PER_MINUTE: '1000000',
  });
  await waitFor(`${base}/healthz`, running);
  await waitFor(`http://127.0.0.1:${internalPort}/healthz`, running);
  return {
    name,
    running,
    base,
    async get(path, key) {
      const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
      return { status: res.status, json: await res.json() };
    },
    async lookups() {
      const text = await (await fetch(`http://127.0.0.1:${internalPort}/metrics`)).text();
      const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? Number.NaN);
      return {
        hit: value(/^wsops_key_cache_lookups_total\{result="hit"\} (\d+)$/m),
        miss: value(/^wsops_key_cache_lookups_total\{result="miss"\} (\d+)$/m),
        bypass: value(/^wsops_key_cache_lookups_total\{result="bypass"\} (\d+)$/m),
        invalidations: value(/^wsops_key_cache_invalidations_total (\d+)$/m),
        trusted: value(/^wsops_key_cache_trusted (\d+)$/m),
      };
    },
  };
}

/** Requests with the key until the process answers it from its cache (its hit count moves). */
async function warm(p: ApiProcess, key: string): Promise<void> {
  await until(
    async () => {
      const before = await p.lookups();
      const res = await p.get('/api/v1/scopes', key);
      assert.equal(res.status, 200, `${p.name}: the key works before the change`);
      return (await p.lookups()).hit === before.hit + 1;
    },
    15_000,
    `${p.name} to answer the key from its cache`,
    50,
  );
}

for (const dialect of DIALECTS) {
  describe(`key cache across two API processes [${dialect}]`, () => {
    let db: TestDatabase;
    let services: Services;
    let ws: string;
    let api: ApiProcess[] = [];
    const cliEnv = () => ({ WSOPS_DATABASE_URL: db.url, WSOPS_SECRET: TEST_SECRET, WSOPS_LOG_LEVEL: 'silent' });

    const newKey = async () => {
      const k = await createKey(services.database, {
        workspaceId: ws,
        scopes: [...READ_SCOPES],
        environment: 'test',
        now: Date.now(),
        maxKeys: 1000,
      });
      return { key: k.key, keyId: k.key_id };
    };
    const warmEverywhere = async (...keys: { key: string }[]) => {
      for (const k of keys) for (const p of api) await warm(p, k.key);
    };
    /** The same request sent to every process at once: the very next request after the change. */
    const everywhere = (path: string, key: string) => Promise.all(api.map((p) => p.get(path, key)));

    before(async () => {
      db = await createTestDatabase(dialect);
      // This test process writes to the same database as a third process would.
      services = await createServices(loadConfig({ WSOPS_DATABASE_URL: db.url, WSOPS_SECRET: TEST_SECRET, WSOPS_MAX_KEYS: '1000' }));
      ws = (await createWorkspace(services.database.db, 'Key cache', parseModules('all'), new Date().toISOString())).id;
      await seedWorkspace(services, ws, { scale: 1, seed: 'test', now: Date.now() });
      api = await Promise.all([startApi('A', db.url), startApi('B', db.url)]);
    });
    after(async () => {
      await Promise.all(api.map((p) => p.running.stop()));
      await services?.close();
      await db?.drop();
    });

    it('a key revoked by `wsops key revoke` (the CLI, another process) is refused on the very next request to each API process', async () => {
      const revoked = [await newKey(), await newKey()];
      const kept = await newKey();
      await warmEverywhere(...revoked, kept);
      for (const k of revoked) {
        await runWsops(['key', 'revoke', '--workspace', ws, k.keyId, '--json'], cliEnv());
        const answers = await everywhere('/api/v1/scopes', k.key);
        assert.deepEqual(
          answers.map((a) => a.status),
          [401, 401],
        );
      }
      for (const answer of await everywhere('/api/v1/scopes', kept.key)) assert.equal(answer.status, 200);
    });

    it('the revoke race, 20 keys: each key revoked by another process is refused on the next request to each API process', async () => {
      const keys = [];
      for (let i = 0; i < 20; i++) keys.push(await newKey());
      await warmEverywhere(...keys);
      const before = await Promise.all(api.map((p) => p.lookups()));
      for (const [i, k] of keys.entries()) {
        await revokeKey(services.database.db, ws, k.keyId, Date.now());
        const answers = await everywhere('/api/v1/scopes', k.key);
        assert.deepEqual(
          answers.map((a) => a.status),
          [401, 401],
          `key ${i + 1} of 20`,
        );
      }
      // The 40 refusals were not answered with the cache switched off: both kept trusting it.
      for (const [i, p] of api.entries()) {
        const now = await p.lookups();
        assert.equal(now.trusted, 1, p.name);
        assert.equal(now.bypass, before[i]?.bypass, `${p.name} never bypassed its cache`);
      }
    });

    it('a key revoked in the console of API process B is refused on the next request to B and to A', async () => {
      const k = await newKey();
      await warmEverywhere(k);
      const b = api[1] as ApiProcess;
      const link = await createAdminLink(services.database, {
        workspaceId: ws,
        email: `cache-${dialect}@example.com`,
        actor: 'cli',
        now: Date.now(),
      });
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      const signIn = await fetch(`${b.base}/console/link/${link.token}`, {
        method: 'POST',
        headers: form,
        body: encodeForm({ password: TEST_PASSWORD, confirm: TEST_PASSWORD }),
        redirect: 'manual',
      });
      assert.equal(signIn.status, 303);
      const cookie = signIn.headers
        .getSetCookie()
        .find((c) => c.startsWith('wsops_console='))
        ?.split(';')[0] as string;
      const session = await loadSession(services.database.db, cookie.split('=')[1] as string, Date.now());
      const revoke = await fetch(`${b.base}/console/keys/${k.keyId}/revoke`, {
        method: 'POST',
        headers: { ...form, cookie },
        body: encodeForm({ _csrf: session?.session.csrfToken as string }),
        redirect: 'manual',
      });
      assert.equal(revoke.status, 303);
      assert.deepEqual(
        (await everywhere('/api/v1/scopes', k.key)).map((a) => a.status),
        [401, 401],
      );
    });

    it('scopes, expiry and secret changed in plain SQL, and a key deleted in plain SQL, are seen on the next request to each process', async () => {
      const [scoped, expired, resecreted, deleted] = [await newKey(), await newKey(), await newKey(), await newKey()];
      await warmEverywhere(scoped, expired, resecreted, deleted);
      const db = services.database.db;

      await sql`UPDATE api_keys SET scopes = 'vendors:read' WHERE key_id = ${scoped.keyId}`.execute(db);
      for (const answer of await everywhere('/api/v1/assets?limit=1', scoped.key)) {
        assert.equal(answer.status, 403);
        assert.equal(answer.json.missing_scope, 'assets:read');
      }
      for (const answer of await everywhere('/api/v1/scopes', scoped.key)) assert.deepEqual(answer.json.scopes, ['vendors:read']);

      await sql`UPDATE api_keys SET expires_at = ${new Date(Date.now() - 1000).toISOString()} WHERE key_id = ${expired.keyId}`.execute(db);
      assert.deepEqual(
        (await everywhere('/api/v1/scopes', expired.key)).map((a) => a.status),
        [401, 401],
      );

      await sql`UPDATE api_keys SET secret_hash = ${hashSecret('A'.repeat(43))} WHERE key_id = ${resecreted.keyId}`.execute(db);
      assert.deepEqual(
        (await everywhere('/api/v1/scopes', resecreted.key)).map((a) => a.status),
        [401, 401],
      );

      await sql`DELETE FROM api_keys WHERE key_id = ${deleted.keyId}`.execute(db);
      assert.deepEqual(
        (await everywhere('/api/v1/scopes', deleted.key)).map((a) => a.status),
        [401, 401],
      );
    });

    it('a module uninstalled by the CLI is an empty list and a 404 detail on the next request to each process; installed again by another process, it is back on the next request', async () => {
      const k = await newKey();
      const id = (await (api[0] as ApiProcess).get('/api/v1/assets?limit=1', k.key)).json.data[0].id as string;
      await warmEverywhere(k);
      await runWsops(['module', 'uninstall', '--workspace', ws, 'assets'], cliEnv());
      for (const answer of await everywhere('/api/v1/assets', k.key)) {
        assert.equal(answer.status, 200);
        assert.deepEqual(answer.json, { data: [], has_more: false, next_cursor: null });
      }
      for (const answer of await everywhere(`/api/v1/assets/${id}`, k.key)) assert.equal(answer.status, 404);

      await warmEverywhere(k);
      await setModule(services.database.db, ws, 'assets', true, new Date().toISOString());
      for (const answer of await everywhere(`/api/v1/assets/${id}`, k.key)) assert.equal(answer.status, 200);
    });

    it('last use is recorded for a key served from the cache, and recording it does not empty any cache', async () => {
      const k = await newKey();
      await warmEverywhere(k);
      const lastUsed = () =>
        sql<{ last_used_at: string | null }>`SELECT last_used_at FROM api_keys WHERE key_id = ${k.keyId}`
          .execute(services.database.db)
          .then((r) => r.rows[0]?.last_used_at ?? null);
      await until(lastUsed, 10_000, 'the last use to be written');
      const before = await Promise.all(api.map((p) => p.lookups()));
      for (let i = 0; i < 3; i++) for (const answer of await everywhere('/api/v1/scopes', k.key)) assert.equal(answer.status, 200);
      for (const [i, p] of api.entries()) {
        const now = await p.lookups();
        assert.equal(now.invalidations, before[i]?.invalidations, `${p.name}: the last-use write invalidated nothing`);
        assert.equal(now.bypass, before[i]?.bypass, p.name);
      }
    });

    if (dialect === 'postgres') {
      it('while its LISTEN session is down a process bypasses its cache (a revoke it cannot hear is refused), then reconnects and hears again', async () => {
        const a = api[0] as ApiProcess;
        const [unheard, later] = [await newKey(), await newKey()];
        await warm(a, unheard.key);
        const admin = new pg.Client({ connectionString: db.url });
        await admin.connect();
        try {
          const listener = await admin.query('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [
            `wsops-auth-listener-${a.running.child.pid}`,
          ]);
          assert.equal(listener.rows.length, 1, 'one LISTEN session per API process');
          const before = await a.lookups();
          // Waits until the session's backend has exited; the process retries after a second.
          await admin.query('SELECT pg_terminate_backend($1, 5000)', [listener.rows[0].pid]);
          await admin.query('UPDATE api_keys SET revoked_at = $1 WHERE key_id = $2', [new Date().toISOString(), unheard.keyId]);
          assert.equal((await a.get('/api/v1/scopes', unheard.key)).status, 401, 'the notification was lost; the cache was not used');
          const during = await a.lookups();
          assert.equal(during.trusted, 0, 'answered while the listener was down');
          assert.equal(during.bypass, before.bypass + 1);

          await until(
            async () => {
              await a.get('/api/v1/scopes', later.key);
              return (await a.lookups()).trusted === 1;
            },
            15_000,
            'the listener to reconnect',
            50,
          );
          await warm(a, later.key);
          await admin.query('UPDATE api_keys SET revoked_at = $1 WHERE key_id = $2', [new Date().toISOString(), later.keyId]);
          assert.equal((await a.get('/api/v1/scopes', later.key)).status, 401, 'after reconnecting, revocations are heard again');
        } finally {
          await admin.end();
        }
      });
    }
  });

  describe(`key cache in one process [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    before(async () => {
      h = await createHarness(dialect);
      ws = await h.workspace({ seed: false });
    });
    after(() => h.close());

    const stats = () => h.services.keyCache.stats();
    /** In-process warm-up: on PostgreSQL the first requests bypass the cache until LISTEN is up. */
    const warmHere = (key: string) =>
      until(
        async () => {
          const hits = stats().hits;
          assert.equal((await h.get('/api/v1/scopes', key)).status, 200);
          return stats().hits === hits + 1;
        },
        10_000,
        'the key to be served from the cache',
        20,
      );

    it('last use moves forward a minute later while the key is served from the cache, without emptying it', async () => {
      const k = await h.key(ws);
      const lastUsed = () =>
        sql<{ last_used_at: string | null }>`SELECT last_used_at FROM api_keys WHERE key_id = ${k.keyId}`
          .execute(h.services.database.db)
          .then((r) => r.rows[0]?.last_used_at ?? null);
      await warmHere(k.key);
      await h.lastUsesWritten();
      const first = await lastUsed();
      assert.ok(first, 'the first use is written');
      h.clock.advance(30_000);
      await warmHere(k.key);
      await h.lastUsesWritten();
      assert.equal(await lastUsed(), first, 'at most one write a minute');
      h.clock.advance(31_000);
      await warmHere(k.key);
      await h.lastUsesWritten();
      assert.equal(await lastUsed(), new Date(h.clock()).toISOString(), 'the later use is written');
      const invalidations = stats().invalidations;
      assert.equal((await h.get('/api/v1/scopes', k.key)).status, 200);
      assert.equal(stats().invalidations, invalidations, 'the last-use write invalidated nothing');
    });

    it('a key revoked through this process is refused on its very next request', async () => {
      for (let i = 0; i < 5; i++) {
        const k = await h.key(ws);
        await warmHere(k.key);
        await revokeKey(h.services.database.db, ws, k.keyId, h.clock());
        assert.equal((await h.get('/api/v1/scopes', k.key)).status, 401);
      }
    });

    it('an expiry passing is refused on the next request although the key is cached (the clock is read on every request)', async () => {
      const k = await h.key(ws, READ_SCOPES, { days: 1 });
      await warmHere(k.key);
      h.clock.advance(86_400_000);
      try {
        assert.equal((await h.get('/api/v1/scopes', k.key)).status, 401);
      } finally {
        h.clock.advance(-86_400_000);
      }
    });

    it('WSOPS_KEY_CACHE=off: every request reads its key', async () => {
      const off = await createHarness(dialect, { WSOPS_KEY_CACHE: 'off' });
      try {
        const w = await off.workspace({ seed: false });
        const k = await off.key(w);
        for (let i = 0; i < 3; i++) assert.equal((await off.get('/api/v1/scopes', k.key)).status, 200);
        assert.deepEqual(off.services.keyCache.stats(), { hits: 0, misses: 0, bypassed: 3, invalidations: 0, entries: 0, trusted: false });
      } finally {
        await off.close();
      }
    });
  });
}

describe('key cache rules', () => {
  const row = (keyId: string, workspaceId = 'wsp_1'): AuthRow => ({
    key_id: keyId,
    workspace_id: workspaceId,
    environment: 'test',
    secret_hash: hashSecret('x'.repeat(43)),
    scopes: 'assets:read',
    expires_at: '2030-01-01T00:00:00.000Z',
    revoked_at: null,
    last_used_at: null,
    allowed_ips: null,
    modules: 'assets',
  });
  /** A database stand-in that counts its reads; `during` runs while a read is in flight. */
  const counting = (during?: () => void) => {
    let reads = 0;
    return {
      reads: () => reads,
      load: (keyId: string) => async () => {
        reads++;
        during?.();
        return keyId.startsWith('k') ? row(keyId, keyId.endsWith('2') ? 'wsp_2' : 'wsp_1') : undefined;
      },
    };
  };

  it('a read that an invalidation overtook is used once but not kept', async () => {
    let cache: KeyCache | undefined;
    const db = counting(() => cache?.invalidate('key:k1'));
    cache = new KeyCache({ trusted: () => true });
    assert.ok(await cache.resolve('k1', db.load('k1')));
    assert.ok(await cache.resolve('k1', db.load('k1')));
    assert.equal(db.reads(), 2);
  });

  it('unknown key ids are never kept: every guess reads the database', async () => {
    const db = counting();
    const cache = new KeyCache({ trusted: () => true });
    for (let i = 0; i < 3; i++) assert.equal(await cache.resolve('unknown', db.load('unknown')), undefined);
    assert.equal(db.reads(), 3);
  });

  it('invalidation by key and by workspace drops only what it names; an untrusted cache is neither read nor filled', async () => {
    const db = counting();
    let trusted = true;
    const cache = new KeyCache({ trusted: () => trusted });
    for (const id of ['k1', 'k2', 'k3']) await cache.resolve(id, db.load(id));
    cache.invalidate('key:k1');
    cache.invalidate('workspace:wsp_2');
    assert.equal(cache.stats().entries, 1, 'k3 (workspace wsp_1) is left');
    trusted = false;
    await cache.resolve('k3', db.load('k3'));
    await cache.resolve('k4', db.load('k4'));
    assert.deepEqual(
      { ...cache.stats(), reads: db.reads() },
      { hits: 0, misses: 3, bypassed: 2, invalidations: 2, entries: 1, trusted: false, reads: 5 },
    );
  });

  it('at most maxEntries are held (the oldest goes), and an entry older than the TTL is read again', async () => {
    let now = 0;
    const db = counting();
    const cache = new KeyCache({ trusted: () => true, maxEntries: 2, ttlMs: 5_000, monotonic: () => now });
    for (const id of ['k1', 'k3', 'k4']) await cache.resolve(id, db.load(id));
    assert.equal(cache.stats().entries, 2);
    await cache.resolve('k4', db.load('k4'));
    assert.equal(db.reads(), 3, 'k4 is held');
    await cache.resolve('k1', db.load('k1'));
    assert.equal(db.reads(), 4, 'k1 was dropped for k4');
    now = 5_001;
    await cache.resolve('k4', db.load('k4'));
    assert.equal(db.reads(), 5, 'k4 is past the TTL');
  });
});
