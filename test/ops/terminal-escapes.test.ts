/**
 * Names reach operators' terminals: the CLI refuses control and text-direction characters in
 * every argument and name, and shows any that are already stored escaped, never raw.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { openDatabase } from '../../src/store/database.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.js';
import { TEST_SECRET } from '../helpers/harness.js';
import { BIN } from '../helpers/processes.js';

/** Clears the screen, sets the terminal title, writes the clipboard (OSC 52), then reverses what follows. */
const HOSTILE = 'esc\u001b[2J\u001b]0;pwned\u0007\u001b]52;c;ZWNobyBwd25lZA==\u0007\u202eevil';
/** What no output may contain: ESC, BEL, C1 controls, bidi embeddings, overrides and isolates. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is what this test does
const RAW_UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

for (const dialect of DIALECTS) {
  describe(`terminal escapes in names [${dialect}]`, () => {
    let db: TestDatabase;
    let ws: string;
    const env = () => ({ ...process.env, WSOPS_DATABASE_URL: db.url, WSOPS_SECRET: TEST_SECRET, WSOPS_LOG_LEVEL: 'silent' });
    const run = (...args: string[]) => {
      const r = spawnSync(process.execPath, [BIN, ...args], { env: env(), encoding: 'utf8' });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) };
    };
    before(async () => {
      db = await createTestDatabase(dialect);
      assert.equal(run('migrate').status, 0);
      const created = run('workspace', 'create', '--name', 'Acme', '--json');
      assert.equal(created.status, 0, created.stderr);
      ws = created.json().id;
    });
    after(() => db.drop());

    for (const [label, args, pattern] of [
      [
        'a key name with ESC sequences',
        () => ['key', 'create', '--workspace', ws, '--scopes', 'assets:read', '--name', HOSTILE],
        /U\+001B/,
      ],
      [
        'a key name with a bidi override',
        () => ['key', 'create', '--workspace', ws, '--scopes', 'assets:read', '--name', 'a\u202eb'],
        /U\+202E/,
      ],
      ['a workspace name with a bidi isolate', () => ['workspace', 'create', '--name', 'Acme\u2067'], /U\+2067/],
      ['an admin email with a C1 control', () => ['admin', 'create', '--workspace', ws, '--email', 'a\u009bb@example.com'], /U\+009B/],
      ['an audit actor with a BEL', () => ['audit', '--workspace', ws, '--actor', 'a\u0007b'], /U\+0007/],
    ] as const) {
      it(`${label} is refused: one line, exit 2, nothing raw printed, nothing stored`, () => {
        const r = run(...args());
        assert.equal(r.status, 2, r.stderr);
        assert.match(r.stderr, pattern);
        assert.match(r.stderr, /^wsops: [^\n]+\n$/);
        assert.doesNotMatch(r.stderr + r.stdout, RAW_UNSAFE);
      });
    }
    it('refused names stored nothing', () => {
      assert.deepEqual(run('key', 'list', '--workspace', ws, '--json').json(), []);
    });

    it('a name stored before these rules is printed escaped by key list and audit, as table and as JSON', async () => {
      const created = run('key', 'create', '--workspace', ws, '--scopes', 'assets:read', '--name', 'plain', '--json');
      assert.equal(created.status, 0, created.stderr);
      const keyId = created.json().key_id as string;
      const database = openDatabase(db.url);
      try {
        await database.db.updateTable('api_keys').set({ name: HOSTILE }).where('key_id', '=', keyId).execute();
        await database.db
          .updateTable('audit_events')
          .set({ detail: JSON.stringify({ name: HOSTILE, environment: 'test', scopes: ['assets:read'] }) })
          .where('workspace_id', '=', ws)
          .where('action', '=', 'key.created')
          .execute();
      } finally {
        await database.close();
      }
      for (const args of [
        ['key', 'list', '--workspace', ws],
        ['audit', '--workspace', ws],
      ]) {
        const table = run(...args);
        assert.equal(table.status, 0, table.stderr);
        assert.doesNotMatch(table.stdout, RAW_UNSAFE, `${args[0]}: nothing raw`);
        assert.ok(table.stdout.includes('esc\\u{1b}[2J\\u{1b}]0;pwned\\u{7}'), table.stdout);
        assert.ok(table.stdout.includes('\\u{202e}evil'), table.stdout);
        const json = run(...args, '--json');
        assert.equal(json.status, 0, json.stderr);
        assert.doesNotMatch(json.stdout, RAW_UNSAFE, `${args[0]} --json: nothing raw`);
        assert.ok(JSON.stringify(json.json()).includes(JSON.stringify(HOSTILE).slice(1, -1)), 'the JSON still holds the exact name');
      }
    });
  });
}
