/**
 * Issue 27, point 3: the CLI reads `.env`, `wsops status` says what the commands work on,
 * `--verbose` names the database, and a database that cannot be opened or reached is one line
 * and an exit status, never a stack. Real `bin/wsops` processes, both databases.
 */
import assert from 'node:assert/strict';
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SETTINGS } from '../../src/config.js';
import { openDatabase } from '../../src/store/database.js';
import { recordServedUrlPolicy } from '../../src/webhooks/endpoints/served-url-policy.js';
import { createTestDatabase, DIALECTS } from '../helpers/databases.js';
import { TEST_SECRET } from '../helpers/harness.js';
import { BIN, freePort, startWsops, until } from '../helpers/processes.js';

/** The environment of the test run without any WSOPS_ setting, so only what a test gives counts. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('WSOPS_')));
  return { ...env, ...extra };
}

/** `bin/wsops ARGS` run in `cwd` (where it looks for .env). */
function wsops(args: string[], cwd: string, env: Record<string, string> = {}): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [BIN, ...args], { cwd, env: cleanEnv(env), encoding: 'utf8', timeout: 120_000 });
}

/** One line on stderr, prefixed `wsops: `, with no stack frame in it. */
function assertOneLine(r: SpawnSyncReturns<string>, status: number, pattern: RegExp): void {
  assert.equal(r.status, status, `exit status; stderr: ${r.stderr}`);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line on stderr, got:\n${r.stderr}`);
  assert.match(lines[0] ?? '', /^wsops: /);
  assert.doesNotMatch(r.stderr, /\n\s+at |node_modules/);
  assert.match(r.stderr, pattern);
}

const withPassword = (url: string) => {
  const u = new URL(url);
  if (u.protocol === 'postgres:') u.password = 'hunter2-database-password';
  return u.toString();
};

describe('the CLI and .env', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'wsops-envfile-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const dialect of DIALECTS) {
    it(`${dialect}: reads .env in the working directory, and a variable in the environment wins over the file`, async () => {
      const db = await createTestDatabase(dialect);
      try {
        writeFileSync(
          join(dir, '.env'),
          [
            '# the deployment this folder works on',
            `WSOPS_DATABASE_URL=${withPassword(db.url)}`,
            `export WSOPS_SECRET="${TEST_SECRET}"`,
            'WSOPS_MAX_KEYS=7',
            'WSOPS_RATE_LIMIT_BURST=300',
            'OTHER_TOOL_SETTING=left alone',
            '',
          ].join('\n'),
        );
        const created = wsops(['workspace', 'create', '--name', 'From dotenv', '--json'], dir, { WSOPS_RATE_LIMIT_BURST: '400' });
        assert.equal(created.status, 0, created.stderr);
        const listed = wsops(['workspace', 'list', '--json'], dir);
        assert.equal(listed.status, 0, listed.stderr);
        assert.deepEqual(
          JSON.parse(listed.stdout).map((w: { name: string }) => w.name),
          ['From dotenv'],
          'both commands worked on the database .env names',
        );
        const status = wsops(['status', '--json'], dir, { WSOPS_RATE_LIMIT_BURST: '400' });
        assert.equal(status.status, 0, status.stderr);
        const settings = Object.fromEntries(
          (JSON.parse(status.stdout).settings as { env: string; value: string; from: string }[]).map((s) => [s.env, s]),
        );
        assert.equal(settings.WSOPS_MAX_KEYS?.value, '7');
        assert.equal(settings.WSOPS_MAX_KEYS?.from, '.env');
        assert.deepEqual(settings.WSOPS_RATE_LIMIT_BURST, { env: 'WSOPS_RATE_LIMIT_BURST', value: '400', from: 'environment' });
        assert.equal(settings.WSOPS_PORT?.from, 'default');
        assert.equal(settings.WSOPS_SECRET?.value, '(set, hidden)');
        assert.ok(!status.stdout.includes(TEST_SECRET) && !status.stdout.includes('hunter2'), 'no secret and no password in the output');
      } finally {
        rmSync(join(dir, '.env'), { force: true });
        await db.drop();
      }
    });
  }

  for (const [content, pattern] of [
    ['WSOPS_PORT=9000\nWSOPS_SECRET abcdefabcdefabcdefabcdefabcdefabcdef\n', /\.env line 2 is not NAME=value; write it as NAME=value/],
    [
      'WSOPS_DATABSE_URL=postgres://db/wsops\n',
      /\.env line 1: WSOPS_DATABSE_URL is not a wsops setting \(did you mean WSOPS_DATABASE_URL\?\)/,
    ],
    ['WSOPS_SECRET="abcdefabcdefabcdefabcdefabcdefabcdef\n', /\.env: a value opened with " is never closed; add the closing "/],
    // A well-formed line with a value the setting refuses: the refusal says which line to fix.
    [
      '# the port\nWSOPS_LOG_LEVEL=info\nWSOPS_PORT=eighty\n',
      /WSOPS_PORT must be a whole number from 0 to 65535; got "eighty" \(set in \.env line 3\)/,
    ],
  ] as const) {
    it(`a malformed .env is one line naming the line, never its value, and exit 2 (${pattern.source.slice(0, 40)}...)`, () => {
      writeFileSync(join(dir, '.env'), content);
      try {
        const r = wsops(['status'], dir);
        assertOneLine(r, 2, pattern);
        assert.ok(!r.stderr.includes('abcdefabcdef'), 'the value is not shown');
      } finally {
        rmSync(join(dir, '.env'), { force: true });
      }
    });
  }
});

describe('wsops status', () => {
  let listening: Server;
  let openPort: number;
  let closedPort: number;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wsops-status-'));
    openPort = await freePort();
    closedPort = await freePort();
    listening = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => listening.listen(openPort, '127.0.0.1', resolve));
  });
  after(async () => {
    await new Promise((resolve) => listening.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  for (const dialect of DIALECTS) {
    it(`${dialect}: names the database (password redacted), its migrations, the listeners and every setting; --json too`, async () => {
      const db = await createTestDatabase(dialect);
      try {
        const env = {
          WSOPS_DATABASE_URL: withPassword(db.url),
          WSOPS_SECRET: TEST_SECRET,
          WSOPS_PORT: String(openPort),
          WSOPS_INTERNAL_PORT: String(closedPort),
        };
        const migrated = wsops(['migrate', '--json'], dir, env);
        assert.equal(migrated.status, 0, migrated.stderr);
        const applied: string[] = JSON.parse(migrated.stdout).applied;
        assert.ok(applied.length > 0);

        const r = wsops(['status', '--json'], dir, env);
        assert.equal(r.status, 0, r.stderr);
        const s = JSON.parse(r.stdout);
        assert.equal(s.database.dialect, dialect);
        assert.equal(s.database.exists, true);
        assert.equal(s.database.error, undefined);
        assert.deepEqual(s.migrations, { applied, pending: [] });
        assert.deepEqual(s.listeners, [
          { name: 'public', host: '127.0.0.1', port: openPort, answering: true },
          { name: 'internal', host: '127.0.0.1', port: closedPort, answering: false },
        ]);
        assert.deepEqual(
          s.settings.map((x: { env: string }) => x.env),
          Object.values(SETTINGS).map((x) => x.env),
          'every setting, in the order of the schema',
        );
        assert.ok(!r.stdout.includes('hunter2') && !r.stdout.includes(TEST_SECRET), 'no password and no secret');

        const human = wsops(['status'], dir, env);
        assert.equal(human.status, 0, human.stderr);
        assert.match(
          human.stdout,
          dialect === 'sqlite' ? /^database +sqlite:\/.*\(SQLite, / : /^database +postgres:\/\/postgres:\*\*\*@.*\(PostgreSQL\)/,
        );
        assert.match(human.stdout, new RegExp(`migrations +${applied.length} applied, 0 pending`));
        assert.match(human.stdout, new RegExp(`public +127\\.0\\.0\\.1:${openPort} +answering`));
        assert.match(human.stdout, new RegExp(`internal +127\\.0\\.0\\.1:${closedPort} +nothing answering`));
        assert.match(human.stdout, /WSOPS_SECRET +\(set, hidden\) +environment/);
        assert.ok(!human.stdout.includes('hunter2') && !human.stdout.includes(TEST_SECRET));

        // The settings above are this shell's; the server that delivers says what it started with.
        assert.equal(s.delivering_server, null);
        assert.match(human.stdout, /^server +no `wsops serve` has delivered from this database yet$/m);
        assert.match(human.stdout, /^settings +of commands run here \(a running server keeps those it read at its start\)$/m);
        const database = openDatabase(db.url);
        const started = { allow_private_webhooks: true, started_at: '2026-11-27T04:00:00.000Z' };
        await recordServedUrlPolicy(database.db, started).finally(() => database.close());
        assert.deepEqual(JSON.parse(wsops(['status', '--json'], dir, env).stdout).delivering_server, started);
        assert.match(
          wsops(['status'], dir, env).stdout,
          /^server +the last `wsops serve` that delivers started 2026-11-27T04:00:00\.000Z, with WSOPS_ALLOW_PRIVATE_WEBHOOKS=true$/m,
        );
      } finally {
        await db.drop();
      }
    });
  }

  it('says whether webhook failure alerts are mailed (the SMTP password hidden) or shown in the console only', () => {
    const database = { WSOPS_DATABASE_URL: `sqlite:${join(dir, 'alerts', 'wsops.db')}` };
    const off = wsops(['status'], dir, database);
    assert.equal(off.status, 0, off.stderr);
    assert.match(
      off.stdout,
      /^alerts +webhook failure alerts are shown in the console only \(set WSOPS_SMTP_URL and WSOPS_ALERT_FROM to mail them\)$/m,
    );
    const mail = { ...database, WSOPS_SMTP_URL: 'smtps://alerts:hunter2@smtp.example.com:465', WSOPS_ALERT_FROM: 'alerts@example.com' };
    const on = wsops(['status'], dir, mail);
    assert.equal(on.status, 0, on.stderr);
    assert.match(
      on.stdout,
      /^alerts +webhook failure alerts are mailed to the console admins through smtps:\/\/alerts:\*\*\*@smtp\.example\.com:465, from alerts@example\.com$/m,
    );
    const json = wsops(['status', '--json'], dir, mail);
    assert.deepEqual(JSON.parse(json.stdout).alerts, {
      mail: true,
      smtp_url: 'smtps://alerts:***@smtp.example.com:465',
      from: 'alerts@example.com',
    });
    assert.ok(![on.stdout, json.stdout].some((out) => out.includes('hunter2')), 'the SMTP password is never shown');
  });

  it('names the workspaces whose failure alerts reach nobody (no console admin, no alert recipient), at status and at endpoint create', () => {
    const database = { WSOPS_DATABASE_URL: `sqlite:${join(dir, 'admins', 'wsops.db')}` };
    const created = wsops(['workspace', 'create', '--name', 'No admin yet', '--json'], dir, database);
    assert.equal(created.status, 0, created.stderr);
    const ws = JSON.parse(created.stdout).id as string;
    const before = wsops(['status'], dir, database);
    assert.equal(before.status, 0, before.stderr);
    assert.ok(
      before.stdout.includes(
        `\n            a workspace has no console admin and no alert recipient, so its failure alerts reach nobody: ${ws} (No admin yet)\n            add one: wsops admin create --workspace WORKSPACE_ID --email EMAIL (or wsops alerts recipients --add EMAIL)\n`,
      ),
      before.stdout,
    );
    assert.deepEqual(JSON.parse(wsops(['status', '--json'], dir, database).stdout).workspaces_alerting_nobody, [
      { id: ws, name: 'No admin yet' },
    ]);
    const endpoint = (env: Record<string, string>) =>
      wsops(
        [
          'endpoint',
          'create',
          '--workspace',
          ws,
          '--url',
          'http://127.0.0.1:9/hook',
          '--scopes',
          'assets:read',
          '--events',
          'asset.assigned',
        ],
        dir,
        { ...env, WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true', WSOPS_SECRET: TEST_SECRET },
      );
    const alone = endpoint(database);
    assert.equal(alone.status, 0, alone.stderr);
    assert.ok(
      alone.stderr.includes(
        `wsops: workspace ${ws} has no console admin and no alert recipient, so this endpoint's failure alerts (failing deliveries, an auto-disable) reach nobody; add one: wsops admin create --workspace ${ws} --email EMAIL (or wsops alerts recipients --workspace ${ws} --add EMAIL)\n`,
      ),
      alone.stderr,
    );
    const admin = wsops(['admin', 'create', '--workspace', ws, '--email', 'ops@example.com'], dir, database);
    assert.equal(admin.status, 0, admin.stderr);
    assert.match(wsops(['status'], dir, database).stdout, /^ {12}every workspace has a console admin or an alert recipient$/m);
    const watched = endpoint(database);
    assert.equal(watched.status, 0, watched.stderr);
    assert.doesNotMatch(watched.stderr, /reach nobody/);
  });

  it('sqlite: a database that does not exist yet is reported, and status does not create it', () => {
    const path = join(dir, 'not-yet', 'wsops.db');
    const r = wsops(['status', '--json'], dir, { WSOPS_DATABASE_URL: `sqlite:${path}` });
    assert.equal(r.status, 0, r.stderr);
    const s = JSON.parse(r.stdout);
    assert.equal(s.database.exists, false);
    assert.equal(s.migrations, null);
    assert.equal(existsSync(path), false, 'status changes nothing');
    assert.equal(existsSync(join(dir, 'not-yet')), false);
  });

  it('postgres: an unreachable database is named in status, which exits 1', () => {
    const r = wsops(['status', '--json'], dir, { WSOPS_DATABASE_URL: `postgres://wsops:hunter2@127.0.0.1:${closedPort}/wsops` });
    assert.equal(r.status, 1, r.stderr);
    const s = JSON.parse(r.stdout);
    assert.match(s.database.error, new RegExp(`cannot reach the database postgres://wsops:\\*\\*\\*@127\\.0\\.0\\.1:${closedPort}/wsops`));
    assert.ok(!r.stdout.includes('hunter2'));
  });
});

describe('a database that cannot be opened or reached is one line and an exit status', () => {
  let dir: string;
  let closedPort: number;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wsops-unreachable-'));
    closedPort = await freePort();
    writeFileSync(join(dir, 'a-file'), 'not a directory');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const command of [['workspace', 'list'], ['migrate'], ['serve']]) {
    it(`postgres, a closed port: \`wsops ${command.join(' ')}\` names the address without its password and exits 1`, () => {
      const r = wsops(command, dir, { WSOPS_DATABASE_URL: `postgres://wsops:hunter2@127.0.0.1:${closedPort}/wsops`, WSOPS_DEMO: 'false' });
      assertOneLine(
        r,
        1,
        new RegExp(
          `^wsops: cannot reach the database postgres://wsops:\\*\\*\\*@127\\.0\\.0\\.1:${closedPort}/wsops: connection refused: is PostgreSQL running.*Check WSOPS_DATABASE_URL`,
        ),
      );
      assert.ok(!r.stderr.includes('hunter2'));
    });
  }

  it('postgres, a database that does not exist: one line that says how to create it, exit 1', async () => {
    const db = await createTestDatabase('postgres');
    await db.drop();
    const name = new URL(db.url).pathname.slice(1);
    const r = wsops(['key', 'list', '--workspace', 'wsp_x'], dir, { WSOPS_DATABASE_URL: db.url });
    assertOneLine(r, 1, new RegExp(`^wsops: the database .*/${name} does not exist: create it \\(\`createdb ${name}\`\\)`));
  });

  it('sqlite, a directory that cannot be created: one line naming the file and the directory, exit 1', () => {
    const url = `sqlite:${join(dir, 'a-file', 'wsops.db')}`;
    for (const command of [['workspace', 'list'], ['migrate']]) {
      assertOneLine(
        wsops(command, dir, { WSOPS_DATABASE_URL: url }),
        1,
        /^wsops: cannot open sqlite:.*a-file\/wsops\.db: its directory .*a-file cannot be created/,
      );
    }
  });

  it('sqlite, a directory under /proc (mkdir answers ENOENT under an existing parent): one line, exit 1, no hang', () => {
    assertOneLine(
      wsops(['workspace', 'list'], dir, { WSOPS_DATABASE_URL: 'sqlite:/proc/wsops-nope/wsops.db' }),
      1,
      /^wsops: cannot open sqlite:\/proc\/wsops-nope\/wsops\.db: its directory \/proc\/wsops-nope cannot be created or written \(ENOENT\)/,
    );
  });

  it('sqlite, a file that is not a database: one line, exit 1', () => {
    const r = wsops(['workspace', 'list'], dir, { WSOPS_DATABASE_URL: `sqlite:${join(dir, 'a-file')}` });
    assertOneLine(r, 1, /is not a SQLite database/);
  });

  it('WSOPS_DATABASE_URL unset and no default database: a command refuses to create one and says what to set (exit 2)', () => {
    const r = wsops(['workspace', 'list'], dir);
    assertOneLine(
      r,
      2,
      /WSOPS_DATABASE_URL is not set and the default database sqlite:\.\/data\/wsops\.db .* does not exist: set WSOPS_DATABASE_URL/,
    );
    assert.equal(existsSync(join(dir, 'data')), false);
  });
});

describe('every command names its database with --verbose; help says what it takes', () => {
  for (const dialect of DIALECTS) {
    it(`${dialect}: --verbose (before or after the command) puts the database on stderr, password redacted`, async () => {
      const db = await createTestDatabase(dialect);
      const dir = mkdtempSync(join(tmpdir(), 'wsops-verbose-'));
      try {
        const env = { WSOPS_DATABASE_URL: withPassword(db.url), WSOPS_SECRET: TEST_SECRET };
        for (const args of [
          ['--verbose', 'workspace', 'list'],
          ['workspace', 'list', '--verbose'],
          ['migrate', '--verbose'],
        ]) {
          const r = wsops(args, dir, env);
          assert.equal(r.status, 0, r.stderr);
          const expected =
            dialect === 'sqlite'
              ? `database: ${db.url} (SQLite, `
              : `database: ${db.url.replace('postgres@', 'postgres:***@')} (PostgreSQL)`;
          assert.ok(r.stderr.startsWith(expected), `${args.join(' ')}: ${r.stderr}`);
          assert.ok(!r.stderr.includes('hunter2'));
        }
        const quiet = wsops(['workspace', 'list'], dir, env);
        assert.equal(quiet.stderr, '', 'without --verbose, nothing on stderr');
      } finally {
        rmSync(dir, { recursive: true, force: true });
        await db.drop();
      }
    });
  }

  it('`key create --help` lists every scope; `migrate --help` says why it exists', () => {
    const key = wsops(['key', 'create', '--help'], tmpdir());
    assert.equal(key.status, 0);
    for (const scope of ['vendors:read', 'people:read', 'tasks:read', 'workplace:read', 'kpi:record'])
      assert.ok(key.stdout.includes(scope), scope);
    assert.match(key.stdout, /--verbose/);
    const migrate = wsops(['migrate', '--help'], tmpdir());
    assert.equal(migrate.status, 0);
    assert.match(migrate.stdout, /applies pending migrations itself/);
    assert.match(migrate.stdout, /run it once, as its own step, before the new version starts/);
  });
});

describe('the start-up log', () => {
  it('`wsops serve` logs every setting in force, secrets hidden and the database password redacted', async () => {
    const db = await createTestDatabase(DIALECTS.includes('postgres') ? 'postgres' : 'sqlite');
    const port = await freePort();
    const token = 'operator-token-0123456789abcdefghijklmnop';
    const server = startWsops(['serve'], {
      WSOPS_DATABASE_URL: withPassword(db.url),
      WSOPS_SECRET: TEST_SECRET,
      WSOPS_OPERATOR_TOKEN: token,
      WSOPS_PORT: String(port),
      WSOPS_KEY_CACHE: 'off',
    });
    try {
      const line = await until(
        () =>
          server
            .output()
            .split('\n')
            .find((l) => l.includes('"wsops starting"')),
        60_000,
        'the start-up line',
      );
      const settings = JSON.parse(line).settings as Record<string, string>;
      assert.deepEqual(
        Object.keys(settings),
        Object.values(SETTINGS).map((s) => s.env),
      );
      assert.equal(settings.WSOPS_PORT, String(port));
      assert.equal(settings.WSOPS_SECRET, '(set, hidden)');
      assert.equal(settings.WSOPS_OPERATOR_TOKEN, '(set, hidden)');
      assert.equal(settings.WSOPS_KEY_CACHE, 'off');
      assert.ok(!server.output().includes(TEST_SECRET) && !server.output().includes(token) && !server.output().includes('hunter2'));
    } finally {
      await server.stop();
      await db.drop();
    }
  });
});
