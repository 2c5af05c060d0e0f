/** The operator CLI as an operator runs it: real processes, --json output, exit 2 on wrong arguments. */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, DIALECTS, type TestDatabase } from './helpers/databases.js';
import { TEST_SECRET } from './helpers/harness.js';
import { freePort } from './helpers/processes.js';

const BIN = new URL('../bin/wsops', import.meta.url).pathname;

for (const dialect of DIALECTS) {
  describe(`wsops CLI [${dialect}]`, () => {
    let db: TestDatabase;
    const env = () => ({ ...process.env, WSOPS_DATABASE_URL: db.url, WSOPS_SECRET: TEST_SECRET, WSOPS_LOG_LEVEL: 'silent' });
    const run = (...args: string[]) => {
      const r = spawnSync(process.execPath, [BIN, ...args], { env: env(), encoding: 'utf8' });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) };
    };
    let ws: string;
    before(async () => {
      db = await createTestDatabase(dialect);
      const migrated = run('migrate', '--json');
      assert.equal(migrated.status, 0, migrated.stderr);
      const created = run('workspace', 'create', '--name', 'Acme', '--modules', 'assets,vendors', '--json');
      assert.equal(created.status, 0, created.stderr);
      ws = created.json().id;
    });
    after(() => db.drop());

    it('key create prints key_id, key and expires_at once; key list never shows a secret; revoke works', () => {
      const created = run('key', 'create', '--workspace', ws, '--scopes', 'assets:read,people:read', '--days', '30', '--json');
      assert.equal(created.status, 0, created.stderr);
      const k = created.json();
      assert.match(k.key, new RegExp(`^svc_sk_test_${k.key_id}_[0-9A-Za-z]+$`), 'key create without --env uses WSOPS_ENV');
      assert.ok(k.expires_at);
      const listed = run('key', 'list', '--workspace', ws, '--json');
      assert.equal(listed.status, 0);
      assert.ok(!listed.stdout.includes(k.key.split('_').at(-1)), 'no secret in the list');
      assert.equal(listed.json().find((x: { key_id: string }) => x.key_id === k.key_id).status, 'valid');
      const revoked = run('key', 'revoke', '--workspace', ws, k.key_id, '--json');
      assert.equal(revoked.status, 0);
      assert.equal(revoked.json().status, 'revoked');
    });

    for (const [label, args, pattern] of [
      ['unknown scope', ['key', 'create', '--workspace', 'WS', '--scopes', 'assets:write'], /unknown scope "assets:write"/],
      [
        'key life over a year',
        ['key', 'create', '--workspace', 'WS', '--scopes', 'assets:read', '--days', '366'],
        /--days must be a whole number from 1 to 365/,
      ],
      ['bad environment', ['key', 'create', '--workspace', 'WS', '--scopes', 'assets:read', '--env', 'prod'], /--env must be live or test/],
      ['unknown module', ['module', 'install', '--workspace', 'WS', 'payroll'], /unknown module "payroll"/],
      ['always-installed module', ['module', 'uninstall', '--workspace', 'WS', 'people'], /always installed/],
      ['unknown workspace', ['key', 'list', '--workspace', 'wsp_nope'], /no workspace wsp_nope/],
      ['unknown option', ['key', 'list', '--workspace', 'WS', '--colour'], /unknown option/],
      ['missing required option', ['workspace', 'create'], /--name/],
      ['unknown register', ['delete', '--workspace', 'WS', 'payslips', 'x_1'], /unknown register "payslips"/],
      ['bad scale', ['seed', '--workspace', 'WS', '--scale', 'lots'], /--scale must be a whole number/],
    ] as const) {
      // Refused before any database work, except the workspace lookup: the others run on the first dialect only.
      const readsDatabase = label === 'unknown workspace';
      if (!readsDatabase && dialect !== DIALECTS[0]) continue;
      it(`wrong arguments print a one-line reason and exit 2: ${label}`, () => {
        const r = run(...args.map((a) => (a === 'WS' ? ws : a)));
        assert.equal(r.status, 2, r.stderr);
        assert.match(r.stderr, pattern);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
        assert.equal(r.stdout, '');
      });
    }

    it('refused key creation writes nothing', () => {
      const before = run('key', 'list', '--workspace', ws, '--json').json().length;
      run('key', 'create', '--workspace', ws, '--scopes', 'assets:read,bogus:read');
      assert.equal(run('key', 'list', '--workspace', ws, '--json').json().length, before);
    });

    it('seed, module uninstall/install, correct and delete', () => {
      const seeded = run('seed', '--workspace', ws, '--json');
      assert.equal(seeded.status, 0, seeded.stderr);
      assert.ok(seeded.json().total > 0);
      assert.equal(run('module', 'uninstall', '--workspace', ws, 'assets', '--json').json().modules.includes('assets'), false);
      assert.equal(run('module', 'install', '--workspace', ws, 'assets', '--json').json().modules.includes('assets'), true);
      assert.equal(run('correct', '--workspace', ws, 'vendors', 'ven_missing', 'notice_period_days=30').status, 2);
      assert.equal(run('delete', '--workspace', ws, 'assets', 'ast_missing').status, 2);
    });

    it('serve on an empty database creates a demo workspace and prints a working key and curl line (on stderr when stdout is piped: stdout holds JSON log lines only)', async () => {
      const fresh = await createTestDatabase(dialect);
      const port = await freePort(); // a random fixed port could be one of the suite's outgoing connections
      const child: ChildProcess = spawn(process.execPath, [BIN, 'serve', '--port', String(port)], {
        env: { ...env(), WSOPS_DATABASE_URL: fresh.url, WSOPS_DEMO: 'true', WSOPS_LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      try {
        let out = '';
        let stdout = '';
        child.stdout?.on('data', (c) => {
          stdout += String(c);
        });
        child.stderr?.on('data', (c) => {
          out += String(c);
        });
        const key = await new Promise<string>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no key printed: ${out}`)), 60_000);
          child.stderr?.on('data', () => {
            const m = /curl -H "Authorization: Bearer (svc_sk_test_\S+)"/.exec(out);
            if (m) {
              clearTimeout(timer);
              resolve(m[1] as string);
            }
          });
        });
        let res: Response | undefined;
        for (let i = 0; i < 100 && !res; i++) {
          res = await fetch(`http://127.0.0.1:${port}/api/v1/assets?limit=2`, { headers: { authorization: `Bearer ${key}` } }).catch(
            () => new Promise<undefined>((r) => setTimeout(() => r(undefined), 100)),
          );
        }
        assert.equal(res?.status, 200);
        const body = (await res?.json()) as { data: unknown[]; has_more: boolean };
        assert.equal(body.data.length, 2);
        assert.equal(body.has_more, true);
        const lines = stdout.split('\n').filter(Boolean);
        assert.ok(lines.length > 0, 'the server logs to stdout');
        for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), `a log line that is not JSON: ${line}`);
        assert.ok(!stdout.includes(key), 'the key is not in the log');
      } finally {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
        await fresh.drop();
      }
    });
  });
}
