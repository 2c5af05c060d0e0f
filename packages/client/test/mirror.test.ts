/**
 * wsops-mirror against a real server, the mirror in the same dialect as the server: the copy
 * equals the source after writes, corrections and deletions (which reach it through the
 * deletions feed on the next incremental run), after a SIGKILL mid-walk or mid-feed and a
 * restart, after delete-recreate-delete under one id, and when the feed's retention has passed;
 * the overlap catches a record stamped before the watermark but committed after.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { WsopsClient } from '@wsops/client';
import { MIRROR_REGISTERS, type MirrorStore, openStore, type RegisterDescriptor, syncOnce } from '@wsops/client/mirror';
import { correctRecord, deleteRecord } from '../../../src/actions/correct.js';
import { registerByPath } from '../../../src/registers/catalogue.js';
import type { Dialect } from '../../../src/store/database.js';
import { deleteOne, putRecord } from '../../../src/writes/record-writes.js';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/databases.js';
import { unreferencedCopies } from '../../../test/helpers/record-copies.js';
import { DIALECTS, startServer, type TestServer } from './helpers/server.js';

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'wsops-mirror');
const byPath = (path: string) => MIRROR_REGISTERS.find((r) => r.path === path)!;

async function assertMirrorEquals(store: MirrorStore, client: WsopsClient, registers: readonly RegisterDescriptor[]): Promise<void> {
  for (const register of registers) {
    const source = [];
    for await (const record of client.register(register.path as never).list({ limit: 1000 })) source.push(record);
    assert.deepEqual(await store.records(register), source, `${register.path}: the mirror differs from the source`);
  }
}

function runCli(
  args: string[],
  env: Record<string, string>,
): { child: ChildProcess; done: Promise<{ code: number | null; stdout: string; stderr: string }> } {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => {
    stdout += d;
  });
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('exit', (code) => resolve({ code, stdout, stderr })),
  );
  return { child, done };
}

/**
 * A loopback proxy in front of the server that forwards each request, except those `hold`
 * picks: they get no answer until the gate closes.
 */
async function startGate(upstream: string, hold: (path: string) => boolean): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(async (req, res) => {
    if (hold(req.url ?? '')) return;
    const answer = await fetch(upstream + req.url, { headers: { authorization: req.headers.authorization ?? '' } });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

for (const dialect of DIALECTS) {
  describe(`wsops-mirror (${dialect})`, () => {
    let s: TestServer;
    let workspace: string;
    let key: string;
    let client: WsopsClient;
    const databases: TestDatabase[] = [];
    const mirrorUrl = async () => {
      const d = await createTestDatabase(dialect as Dialect);
      databases.push(d);
      return d.url;
    };

    before(async () => {
      s = await startServer(dialect);
      workspace = await s.workspace();
      key = (await s.key(workspace)).key;
      client = new WsopsClient({ apiKey: key, baseUrl: s.baseUrl });
    });
    after(async () => {
      await s.close();
      for (const d of databases) await d.drop();
    });

    it('a first run copies every register; later runs follow writes and corrections; a full run removes deleted records', async () => {
      const store = await openStore(await mirrorUrl());
      try {
        // Records nothing references, for the deletions below.
        const [personGone] = await unreferencedCopies(s.services, workspace, 'people', 1, 'gone');
        const [assetGone] = await unreferencedCopies(s.services, workspace, 'assets', 1, 'gone');
        const first = await syncOnce({ client, store, registers: MIRROR_REGISTERS });
        assert.ok(Object.values(first.registers).every((r) => r.mode === 'full'));
        await assertMirrorEquals(store, client, MIRROR_REGISTERS);

        // Random corrections (they move updated_at and emit nothing), new records and deletions.
        const people = (await client.people.listPage({ limit: 50 })).data;
        const assets = (await client.assets.listPage({ limit: 50 })).data;
        for (const [i, p] of people.entries())
          if (i % 3 === 0) await correctRecord(s.services, workspace, 'people', p.id, [`job_title=Title ${i}`]);
        for (const [i, a] of assets.entries())
          if (i % 4 === 1) await correctRecord(s.services, workspace, 'assets', a.id, [`name=Renamed ${i}`]);
        await s.services.records.put(workspace, registerByPath('assets')!, {
          ...assets[0],
          id: 'ast_newrecord1',
          updated_at: new Date(s.clock() + 5000).toISOString(),
        });
        await deleteRecord(s.services, workspace, 'people', personGone!);
        await deleteRecord(s.services, workspace, 'assets', assetGone!);

        const incremental = await syncOnce({ client, store, registers: MIRROR_REGISTERS });
        assert.equal(incremental.registers.people?.mode, 'incremental');
        assert.equal(incremental.registers.assets?.mode, 'incremental');
        assert.equal(incremental.removed, 2, 'the deletions feed brings both deletions to an incremental run');
        assert.equal((await store.records(byPath('people'))).find((p) => p.id === people[3]!.id)?.job_title, 'Title 3');
        assert.ok((await store.records(byPath('assets'))).some((a) => a.id === 'ast_newrecord1'));
        assert.ok(!(await store.records(byPath('people'))).some((p) => p.id === personGone));
        assert.ok(!(await store.records(byPath('assets'))).some((a) => a.id === assetGone));
        await assertMirrorEquals(store, client, MIRROR_REGISTERS);

        const full = await syncOnce({ client, store, registers: MIRROR_REGISTERS, full: true });
        assert.equal(full.removed, 0, 'nothing was left for the full walk to remove');
        await assertMirrorEquals(store, client, MIRROR_REGISTERS);

        // Nothing changed: an incremental run stores only the overlap window and removes nothing.
        const idle = await syncOnce({ client, store, registers: MIRROR_REGISTERS });
        assert.equal(idle.removed, 0);
        await assertMirrorEquals(store, client, MIRROR_REGISTERS);
      } finally {
        await store.close();
      }
    });

    it('a record stamped before the watermark but committed after it is caught by the overlap; with overlap 0 it is missed until the daily full walk', async () => {
      const tasks = byPath('tasks');
      for (const overlapMs of [5 * 60_000, 0]) {
        const store = await openStore(await mirrorUrl());
        try {
          const now = Date.now();
          await syncOnce({ client, store, registers: [tasks], now: () => now });
          const { watermark } = await store.state(tasks);
          const template = (await client.tasks.listPage({ limit: 1 })).data[0]!;
          const id = `tsk_late${overlapMs}`;
          // Stamped one minute before the watermark, committed only now.
          await s.services.records.put(workspace, registerByPath('tasks')!, {
            ...template,
            id,
            updated_at: new Date(Date.parse(watermark!) - 60_000).toISOString(),
          });
          await syncOnce({ client, store, registers: [tasks], overlapMs, now: () => now + 60_000 });
          const caught = (await store.records(tasks)).some((t) => t.id === id);
          assert.equal(caught, overlapMs > 0, overlapMs > 0 ? 'the overlap catches it' : 'without overlap the walk misses it');
          // A day later the run is a full walk, which repairs any miss.
          const daily = await syncOnce({ client, store, registers: [tasks], overlapMs, now: () => now + 25 * 3600_000 });
          assert.equal(daily.registers.tasks?.mode, 'full');
          await assertMirrorEquals(store, client, [tasks]);
          await deleteRecord(s.services, workspace, 'tasks', id);
        } finally {
          await store.close();
        }
      }
    });

    it('killed with SIGKILL mid-walk and started again, the mirror converges to the source', async () => {
      const url = await mirrorUrl();
      // The first run goes through a gate that answers two pages of people and holds every
      // later request: the kill lands mid-walk however fast the pages are.
      let peoplePages = 0;
      const gate = await startGate(s.baseUrl, (path) => path.startsWith('/api/v1/people') && ++peoplePages > 2);
      const { child, done } = runCli(['--once', '--page-size', '2', '--registers', 'people,assets'], {
        WSOPS_API_KEY: key,
        WSOPS_BASE_URL: gate.url,
        WSOPS_MIRROR_DATABASE_URL: url,
      });
      const env = { WSOPS_API_KEY: key, WSOPS_BASE_URL: s.baseUrl, WSOPS_MIRROR_DATABASE_URL: url };
      // Wait until some pages are stored, then kill it.
      const deadline = Date.now() + 30_000;
      let stored = 0;
      while (Date.now() < deadline && child.exitCode === null) {
        await new Promise((r) => setTimeout(r, 25));
        const peek = await openStore(url).catch(() => undefined);
        if (!peek) continue;
        try {
          // The run creates the tables meanwhile; the two take turns (mirror-concurrent-start
          // .test.ts), and a peek that meets a busy database only looks again.
          await peek.prepare([byPath('people')]);
          stored = (await peek.records(byPath('people'))).length;
        } catch {
          stored = 0;
        } finally {
          await peek.close();
        }
        if (stored > 0) break;
      }
      child.kill('SIGKILL');
      const killed = await done;
      await gate.close();
      assert.equal(killed.code, null, `the run was killed mid-walk (stored ${stored})`);
      assert.ok(stored > 0);
      const store = await openStore(url);
      try {
        assert.equal((await store.state(byPath('assets'))).watermark, null, 'no watermark moved for an unfinished walk');
        const again = await runCli(['--once', '--json', '--registers', 'people,assets'], env).done;
        assert.equal(again.code, 0, again.stderr);
        const summary = JSON.parse(again.stdout.trim());
        assert.equal(summary.registers.people.mode, 'full');
        await assertMirrorEquals(store, client, [byPath('people'), byPath('assets')]);
      } finally {
        await store.close();
      }
    });

    it('delete, recreate, delete under one id converges on incremental runs, also when delete and recreate fall between two runs', async () => {
      const people = byPath('people');
      const store = await openStore(await mirrorUrl());
      const now = Date.now();
      const run = async () => {
        const summary = await syncOnce({ client, store, registers: [people], now: () => now });
        await assertMirrorEquals(store, client, [people]);
        return summary;
      };
      const copyOf = async (id: string) => (await store.records(people)).find((p) => p.id === id);
      try {
        await run();
        const template = (await client.people.listPage({ limit: 1 })).data[0]!;
        // Without a manager: an earlier test may have deleted the template's.
        const { created_at: _c, updated_at: _u, ...rest } = template;
        const body = { ...rest, manager_id: null };
        const id = 'per_phoenix';
        // The server's clock stands still between writes: the rule holds within one millisecond.
        await putRecord(s.services, workspace, registerByPath('people')!, id, { ...body, id, job_title: 'First' });
        await run();
        assert.equal((await copyOf(id))?.job_title, 'First');

        await deleteOne(s.services, workspace, registerByPath('people')!, id);
        assert.equal((await run()).registers.people?.mode, 'incremental');
        assert.equal(await copyOf(id), undefined, 'the deletion reached the mirror');

        await putRecord(s.services, workspace, registerByPath('people')!, id, { ...body, id, job_title: 'Second' });
        await run();
        assert.equal((await copyOf(id))?.job_title, 'Second', 'written again: the old tombstone does not remove it');

        await deleteOne(s.services, workspace, registerByPath('people')!, id);
        await run();
        assert.equal(await copyOf(id), undefined);

        // Delete and recreate between two runs: the mirror ends with the new record.
        await putRecord(s.services, workspace, registerByPath('people')!, id, { ...body, id, job_title: 'Third' });
        await run();
        await deleteOne(s.services, workspace, registerByPath('people')!, id);
        await putRecord(s.services, workspace, registerByPath('people')!, id, { ...body, id, job_title: 'Fourth' });
        const last = await run();
        assert.equal(last.registers.people?.mode, 'incremental');
        assert.equal((await copyOf(id))?.job_title, 'Fourth');
        // Runs after it, which read the overlap again, keep it.
        await run();
        assert.equal((await copyOf(id))?.job_title, 'Fourth');
        await deleteOne(s.services, workspace, registerByPath('people')!, id);
      } finally {
        await store.close();
      }
    });

    it("a feed position older than the feed's retention makes the run walk in full by itself, and say so", async () => {
      const tasks = byPath('tasks');
      // A key that outlives the jump of the server's clock past the retention.
      const longKey = (await s.key(workspace, undefined, { days: 365 })).key;
      const longClient = new WsopsClient({ apiKey: longKey, baseUrl: s.baseUrl });
      const store = await openStore(await mirrorUrl());
      const jump = (s.services.config.deletionRetentionDays + 1) * 86_400_000;
      const notices: string[] = [];
      const now = Date.now();
      const run = (at: number) =>
        syncOnce({ client: longClient, store, registers: [tasks], now: () => at, onNotice: (_r, m) => notices.push(m) });
      try {
        const [first, second] = await unreferencedCopies(s.services, workspace, 'tasks', 2, 'retention');
        await run(now);
        await deleteRecord(s.services, workspace, 'tasks', first!);
        const incremental = await run(now + 60_000);
        assert.equal(incremental.registers.tasks?.mode, 'incremental');
        assert.equal(incremental.removed, 1);
        assert.deepEqual(notices, []);

        s.clock.advance(jump);
        try {
          const fallback = await run(now + 120_000);
          assert.equal(fallback.registers.tasks?.mode, 'full');
          assert.equal(fallback.registers.tasks?.fullReason, 'deletions_beyond_retention');
          assert.equal(notices.length, 1);
          assert.match(notices[0]!, /deletions feed no longer reaches back.*walking tasks in full/);
          await assertMirrorEquals(store, longClient, [tasks]);
          // No deletion since: the next run is incremental again, not a full walk each time.
          const quiet = await run(now + 180_000);
          assert.equal(quiet.registers.tasks?.mode, 'incremental', 'the position is current again');
          assert.equal(notices.length, 1);

          await deleteRecord(s.services, workspace, 'tasks', second!);
          const after = await run(now + 240_000);
          assert.equal(after.registers.tasks?.mode, 'incremental');
          assert.equal(after.removed, 1);
          assert.ok(!(await store.records(tasks)).some((t) => t.id === second));
          await assertMirrorEquals(store, longClient, [tasks]);
          assert.equal(notices.length, 1);
        } finally {
          s.clock.advance(-jump);
        }
      } finally {
        await store.close();
      }
    });

    it('killed between pages of the deletions feed, the mirror keeps its positions and the next run removes every deletion', async () => {
      const people = byPath('people');
      const url = await mirrorUrl();
      const env = { WSOPS_API_KEY: key, WSOPS_BASE_URL: s.baseUrl, WSOPS_MIRROR_DATABASE_URL: url };
      const first = await runCli(['--once', '--json', '--registers', 'people'], env).done;
      assert.equal(first.code, 0, first.stderr);
      const store = await openStore(url);
      try {
        const victims = await unreferencedCopies(s.services, workspace, 'people', 3, 'victim');
        const copied = await runCli(['--once', '--registers', 'people'], env).done;
        assert.equal(copied.code, 0, copied.stderr);
        const before = await store.state(people);
        for (const id of victims) await deleteRecord(s.services, workspace, 'people', id);
        // Pages of 2: the feed's first page is applied, its second is held, then the run is killed.
        let feedPages = 0;
        const gate = await startGate(s.baseUrl, (path) => path.startsWith('/api/v1/people/deletions') && ++feedPages > 1);
        const { child, done } = runCli(['--once', '--page-size', '2', '--registers', 'people'], { ...env, WSOPS_BASE_URL: gate.url });
        const deadline = Date.now() + 30_000;
        while (Date.now() < deadline && feedPages < 2 && child.exitCode === null) await new Promise((r) => setTimeout(r, 25));
        child.kill('SIGKILL');
        const killed = await done;
        await gate.close();
        assert.equal(killed.code, null, `killed mid-feed (${killed.stderr})`);
        assert.deepEqual(await store.state(people), before, 'neither the watermark nor the feed position moved');
        const left = (await store.records(people)).filter((p) => victims.includes(p.id as string)).length;
        assert.ok(left > 0, 'killed before every deletion was applied');

        const again = await runCli(['--once', '--json', '--registers', 'people'], env).done;
        assert.equal(again.code, 0, again.stderr);
        const summary = JSON.parse(again.stdout.trim());
        assert.equal(summary.registers.people.mode, 'incremental');
        assert.equal(summary.registers.people.removed, left);
        await assertMirrorEquals(store, client, [people]);
      } finally {
        await store.close();
      }
    });

    it('wrong configuration ends with one clear line and exit status 2, and creates nothing', async () => {
      const narrow = (await s.key(workspace, ['people:read'])).key;
      const file = join(dirname(fileURLToPath(import.meta.url)), `never-${dialect}.db`);
      const sqlite = `sqlite:${file}`;
      const cases: [Record<string, string>, string[], RegExp][] = [
        [{ WSOPS_BASE_URL: s.baseUrl, WSOPS_MIRROR_DATABASE_URL: sqlite }, ['--once'], /WSOPS_API_KEY is not set/],
        [{ WSOPS_API_KEY: `${key}x`, WSOPS_BASE_URL: s.baseUrl, WSOPS_MIRROR_DATABASE_URL: sqlite }, ['--once'], /not accepted/],
        [
          { WSOPS_API_KEY: narrow, WSOPS_BASE_URL: s.baseUrl, WSOPS_MIRROR_DATABASE_URL: sqlite },
          ['--registers', 'people,vendors'],
          /lacks vendors:read/,
        ],
        [
          { WSOPS_API_KEY: key, WSOPS_BASE_URL: 'http://127.0.0.1:1', WSOPS_MIRROR_DATABASE_URL: sqlite },
          ['--once'],
          /cannot use http:\/\/127\.0\.0\.1:1/,
        ],
        [
          { WSOPS_API_KEY: key, WSOPS_BASE_URL: s.baseUrl, WSOPS_MIRROR_DATABASE_URL: sqlite },
          ['--registers', 'asets'],
          /unknown register "asets"/,
        ],
        [
          { WSOPS_API_KEY: key, WSOPS_BASE_URL: s.baseUrl, WSOPS_MIRROR_DATABASE_URL: 'mysql://x' },
          ['--once'],
          /must be sqlite:PATH or postgres/,
        ],
        [
          { WSOPS_API_KEY: key, WSOPS_BASE_URL: s.baseUrl, WSOPS_MIRROR_DATABASE_URL: sqlite },
          ['--listen', '8099'],
          /WSOPS_WEBHOOK_SECRET/,
        ],
      ];
      for (const [env, args, message] of cases) {
        const r = await runCli(args, env).done;
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, message);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
        assert.ok(!r.stderr.includes(key.split('_').at(-1)!), 'the key is never printed');
        assert.equal(r.stdout, '');
        assert.ok(!existsSync(file), 'nothing was created');
      }
    });
  });
}
