/**
 * wsops-mirror's long-running modes as real processes against a real server: `--listen PORT`
 * (a verified webhook receiver; the service's own worker delivers to it) and `--watch`
 * (polling). Each waits for its effect with a bounded poll, never a fixed sleep.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { WsopsClient } from '@wsops/client';
import { MIRROR_REGISTERS, type MirrorStore, openStore, type RegisterDescriptor } from '@wsops/client/mirror';
import { correctRecord } from '../../../src/actions/correct.js';
import type { Dialect } from '../../../src/store/database.js';
import { listEndpoints } from '../../../src/webhooks/endpoints/endpoints.js';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/databases.js';
import { TEST_SECRET } from '../../../test/helpers/harness.js';
import { DIALECTS, startServer, type TestServer } from './helpers/server.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const MIRROR_BIN = join(HERE, '..', 'bin', 'wsops-mirror');
const WSOPS_BIN = join(HERE, '..', '..', '..', 'bin', 'wsops');
const byPath = (path: string) => MIRROR_REGISTERS.find((r) => r.path === path)!;

interface Running {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** The `--json` summary lines printed so far. */
  summaries: () => { startedAt: string; upserted: number; registers: Record<string, { mode: string }> }[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(bin: string, args: string[], env: Record<string, string>): Running {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    err += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    summaries: () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l)),
    exited,
  };
}

/** Polls `check` every 50 ms until it returns a value (not undefined/false) or the bound passes. */
async function waitUntil<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

function sign(body: string, secret: string, t = Math.floor(Date.now() / 1000)): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

async function assertMirrorEquals(store: MirrorStore, client: WsopsClient, registers: readonly RegisterDescriptor[]): Promise<void> {
  for (const register of registers) {
    const source = [];
    for await (const record of client.register(register.path as never).list({ limit: 1000 })) source.push(record);
    assert.deepEqual(await store.records(register), source, `${register.path}: the mirror differs from the source`);
  }
}

for (const dialect of DIALECTS) {
  describe(`wsops-mirror --listen and --watch as processes (${dialect})`, () => {
    const serverEnv = { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' };
    let s: TestServer;
    let workspace: string;
    let key: string;
    let client: WsopsClient;
    const databases: TestDatabase[] = [];
    const running: Running[] = [];
    const mirrorUrl = async () => {
      const d = await createTestDatabase(dialect as Dialect);
      databases.push(d);
      return d.url;
    };
    /** The operator CLI and worker, on the server's database. */
    const wsopsEnv = () => ({
      WSOPS_DATABASE_URL: s.databaseUrl,
      WSOPS_SECRET: TEST_SECRET,
      WSOPS_DEMO: 'false',
      WSOPS_LOG_LEVEL: 'silent',
      ...serverEnv,
    });
    const wsops = (...args: string[]) => {
      const r = spawnSync(process.execPath, [WSOPS_BIN, ...args], {
        env: { PATH: process.env.PATH ?? '', ...wsopsEnv() },
        encoding: 'utf8',
      });
      assert.equal(r.status, 0, `wsops ${args.join(' ')}: ${r.stderr}`);
      return JSON.parse(r.stdout);
    };

    before(async () => {
      s = await startServer(dialect, serverEnv);
      workspace = await s.workspace();
      key = (await s.key(workspace)).key;
      client = new WsopsClient({ apiKey: key, baseUrl: s.baseUrl });
    });
    after(async () => {
      for (const r of running) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
      await Promise.all(running.map((r) => r.exited));
      await s.close();
      for (const d of databases) await d.drop();
    });

    it('--listen: a verified asset.assigned delivery from the worker triggers an incremental run that copies the change; a wrong signature is refused with 400 and triggers no run', async () => {
      const url = await mirrorUrl();
      const mirrorEnv = { WSOPS_API_KEY: key, WSOPS_BASE_URL: s.baseUrl, WSOPS_MIRROR_DATABASE_URL: url };
      const registers = ['--registers', 'assets,people'];
      const first = start(MIRROR_BIN, ['--once', '--json', ...registers], mirrorEnv);
      running.push(first);
      assert.equal((await first.exited).code, 0, first.stderr());
      assert.equal(first.summaries()[0]?.registers.assets?.mode, 'full');

      // Registered before the receiver exists (its secret is needed to start it); no worker
      // runs yet, so the verification waits in the queue.
      const port = await freePort();
      const endpoint = wsops(
        'endpoint',
        'create',
        '--workspace',
        workspace,
        '--url',
        `http://127.0.0.1:${port}/webhooks`,
        '--scopes',
        'assets:read',
        '--events',
        'asset.assigned',
        '--json',
      ) as { id: string; secret: string; status: string };
      assert.equal(endpoint.status, 'unverified');

      const mirror = start(MIRROR_BIN, ['--listen', String(port), '--json', ...registers], {
        ...mirrorEnv,
        WSOPS_WEBHOOK_SECRET: endpoint.secret,
      });
      running.push(mirror);
      await waitUntil('the listener and its first run', () => mirror.stderr().includes('listening') && mirror.summaries().length >= 1);
      assert.equal(mirror.summaries()[0]?.registers.assets?.mode, 'incremental', 'the first run in --listen follows the watermark');

      // Idle now (no worker, no event): a delivery that is not authentic is refused and starts
      // no run. A run it started would begin before the 400 is answered, so the first run
      // after it must have started after the authentic delivery that follows.
      const before = mirror.summaries().length;
      const body = JSON.stringify({ id: 'evt_forged1', type: 'asset.assigned', created: 1, api_version: '1', data: {} });
      const forgedAt = Date.now();
      const forged = await fetch(`http://127.0.0.1:${port}/webhooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-signature': sign(body, 'whsec_not_the_secret') },
        body,
      });
      assert.equal(forged.status, 400);
      assert.deepEqual(await forged.json(), { error: 'no_matching_signature' });
      const tampered = await fetch(`http://127.0.0.1:${port}/webhooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-signature': sign(body, endpoint.secret) },
        body: body.replace('evt_forged1', 'evt_forged2'),
      });
      assert.equal(tampered.status, 400, 'a body changed after signing is refused');
      await waitUntil('the refusals logged', () => mirror.stderr().match(/refused a delivery: no v1 signature/g)?.length === 2);
      const authenticAt = Date.now();
      const authentic = await fetch(`http://127.0.0.1:${port}/webhooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-signature': sign(body, endpoint.secret) },
        body,
      });
      assert.equal(authentic.status, 200);
      const next = await waitUntil('the run of the authentic delivery', () => mirror.summaries()[before]);
      assert.ok(Date.parse(next.startedAt) >= forgedAt, 'a run after the refused deliveries');
      assert.ok(
        Date.parse(next.startedAt) >= authenticAt - 1,
        `the first run after the refused deliveries started at ${next.startedAt}, before the authentic one was sent (${new Date(authenticAt).toISOString()}): a refused delivery triggered it`,
      );

      // The service's worker now delivers the queued verification; the mirror answers 2xx.
      const worker = start(WSOPS_BIN, ['serve', '--only', 'worker'], wsopsEnv());
      running.push(worker);
      await waitUntil('the endpoint to become active', async () => {
        const [view] = (await listEndpoints(s.services, workspace)).filter((e) => e.id === endpoint.id);
        return view?.status === 'active';
      });

      const person = (await client.people.listPage({ limit: 100 })).data.find((p) => p.status === 'ACTIVE')!;
      const asset = (await client.assets.listPage({ limit: 100 })).data.find((a) => a.status === 'AVAILABLE')!;
      const store = await openStore(url);
      try {
        assert.equal((await store.records(byPath('assets'))).find((a) => a.id === asset.id)?.status, 'AVAILABLE');
        const acted = wsops('act', 'asset.assign', '--workspace', workspace, '--asset', asset.id, '--person', person.id, '--json') as {
          events: string[];
        };
        assert.equal(acted.events.length, 1);
        const copied = await waitUntil('the assignment in the mirror', async () => {
          const row = (await store.records(byPath('assets'))).find((a) => a.id === asset.id);
          return row?.status === 'ASSIGNED' ? row : undefined;
        });
        assert.equal(copied.assigned_user_id, person.id);
        assert.deepEqual(copied, await client.assets.get(asset.id), 'the mirrored record equals the served one');
        assert.ok(
          mirror.summaries().every((r) => r.registers.assets?.mode === 'incremental'),
          'event-triggered runs are incremental',
        );

        mirror.child.kill('SIGTERM');
        const stopped = await mirror.exited;
        assert.equal(stopped.code, 0, mirror.stderr());
        assert.ok(!mirror.stderr().includes(endpoint.secret), 'the signing secret is never printed');
        await assertMirrorEquals(store, client, [byPath('assets'), byPath('people')]);
      } finally {
        await store.close();
        worker.child.kill('SIGTERM');
        await worker.exited;
      }
    });

    it('--listen on a port already in use ends with one line and exit status 2', async () => {
      const busy = createServer();
      await new Promise<void>((resolve) => busy.listen(0, resolve));
      const { port } = busy.address() as { port: number };
      try {
        const r = start(MIRROR_BIN, ['--listen', String(port), '--registers', 'assets'], {
          WSOPS_API_KEY: key,
          WSOPS_BASE_URL: s.baseUrl,
          WSOPS_MIRROR_DATABASE_URL: await mirrorUrl(),
          WSOPS_WEBHOOK_SECRET: 'whsec_anything',
        });
        running.push(r);
        assert.equal((await r.exited).code, 2, r.stderr());
        assert.match(r.stderr(), new RegExp(`cannot listen on port ${port}: .*EADDRINUSE`));
        assert.equal(r.stderr().trim().split('\n').length, 1, r.stderr());
        assert.equal(r.stdout(), '');
      } finally {
        await new Promise((r) => busy.close(r));
      }
    });

    it('--watch: a change made after the first run appears without a restart; SIGTERM ends it with status 0 and a copy equal to the source', async () => {
      const url = await mirrorUrl();
      const registers = [byPath('people'), byPath('tasks')];
      const mirror = start(MIRROR_BIN, ['--watch', '--interval', '1', '--json', '--registers', 'people,tasks'], {
        WSOPS_API_KEY: key,
        WSOPS_BASE_URL: s.baseUrl,
        WSOPS_MIRROR_DATABASE_URL: url,
      });
      running.push(mirror);
      await waitUntil('the first run', () => mirror.summaries().length >= 1);
      assert.equal(mirror.summaries()[0]?.registers.people?.mode, 'full');

      const person = (await client.people.listPage({ limit: 1 })).data[0]!;
      await correctRecord(s.services, workspace, 'people', person.id, ['job_title=Watched title']);
      const store = await openStore(url);
      try {
        await waitUntil('the correction in the mirror', async () =>
          (await store.records(byPath('people'))).some((p) => p.id === person.id && p.job_title === 'Watched title'),
        );
        // The rows commit before the run's summary line is printed: wait for that line too.
        await waitUntil('the summary of a later run of the same process', () => mirror.summaries().length >= 2);
        assert.equal(mirror.summaries().at(-1)?.registers.people?.mode, 'incremental');
        assert.equal(mirror.child.exitCode, null, 'still running between runs');

        mirror.child.kill('SIGTERM');
        const stopped = await mirror.exited;
        assert.deepEqual(stopped, { code: 0, signal: null }, mirror.stderr());
        assert.equal(mirror.stderr(), '');
        await assertMirrorEquals(store, client, registers);
        for (const r of registers) assert.notEqual((await store.state(r)).watermark, null);
      } finally {
        await store.close();
      }
    });
  });
}
