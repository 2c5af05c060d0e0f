/** `wsops admin create|list|remove` as an operator runs them: real processes, real databases. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.js';
import { TEST_SECRET } from '../helpers/harness.js';

const BIN = new URL('../../bin/wsops', import.meta.url).pathname;

for (const dialect of DIALECTS) {
  describe(`wsops admin [${dialect}]`, () => {
    let db: TestDatabase;
    const run = (...args: string[]) => {
      const r = spawnSync(process.execPath, [BIN, ...args], {
        env: {
          ...process.env,
          WSOPS_DATABASE_URL: db.url,
          WSOPS_SECRET: TEST_SECRET,
          WSOPS_LOG_LEVEL: 'silent',
          WSOPS_BASE_URL: 'https://ops.example.com/',
        },
        encoding: 'utf8',
      });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) };
    };
    let ws: string;
    let other: string;
    before(async () => {
      db = await createTestDatabase(dialect);
      assert.equal(run('migrate').status, 0);
      ws = run('workspace', 'create', '--name', 'Acme', '--json').json().id;
      other = run('workspace', 'create', '--name', 'Other', '--json').json().id;
    });
    after(() => db.drop());

    it('admin create --json prints a one-time sign-in link built on WSOPS_BASE_URL', () => {
      const r = run('admin', 'create', '--workspace', ws, '--email', 'Office.Admin@Example.com', '--json');
      assert.equal(r.status, 0, r.stderr);
      const out = r.json();
      assert.match(out.sign_in_url, /^https:\/\/ops\.example\.com\/console\/link\/[0-9A-Za-z]{43}$/);
      assert.equal(out.email, 'office.admin@example.com', 'addresses are stored lower-cased');
      assert.equal(out.created, true);
    });

    it('admin create again for an existing address issues a new link (forgotten password) and keeps one admin', () => {
      const first = run('admin', 'create', '--workspace', ws, '--email', 'again@example.com', '--json').json();
      const second = run('admin', 'create', '--workspace', ws, '--email', 'again@example.com', '--json').json();
      assert.equal(second.created, false);
      assert.equal(second.admin_id, first.admin_id);
      assert.notEqual(second.sign_in_url, first.sign_in_url);
      const listed = run('admin', 'list', '--workspace', ws, '--json').json();
      assert.equal(listed.filter((a: { email: string }) => a.email === 'again@example.com').length, 1);
    });

    it("an address may administer several workspaces: adding it to another creates that workspace's own admin, whatever the first holds", () => {
      const first = run('admin', 'create', '--workspace', ws, '--email', 'one@example.com', '--json').json();
      const second = run('admin', 'create', '--workspace', other, '--email', 'one@example.com', '--json');
      assert.equal(second.status, 0);
      assert.equal(second.json().created, true);
      assert.notEqual(second.json().admin_id, first.admin_id);
      assert.equal(run('admin', 'list', '--workspace', other, '--json').json().length, 1);
    });

    for (const [label, email] of [
      ['no @', 'office.example.com'],
      ['no domain dot', 'office@example'],
      ['spaces', 'office admin@example.com'],
      ['markup', '<script>@example.com'],
    ] as const) {
      // The address is refused before any database work: the first dialect is enough.
      if (dialect !== DIALECTS[0]) continue;
      it(`a malformed email is refused with a one-line reason, exit 2, nothing written: ${label}`, () => {
        const r = run('admin', 'create', '--workspace', ws, '--email', email);
        assert.equal(r.status, 2, r.stderr);
        assert.match(r.stderr, /is not an email address/);
        assert.equal(r.stderr.trim().split('\n').length, 1);
        assert.equal(r.stdout, '');
      });
    }

    it('an unknown workspace is refused (exit 2)', () => {
      const r = run('admin', 'create', '--workspace', 'wsp_nope', '--email', 'x@example.com');
      assert.equal(r.status, 2);
      assert.match(r.stderr, /no workspace wsp_nope/);
    });

    it('admin list shows the admins, never a password hash; admin remove by email or id removes them', () => {
      const a = run('admin', 'create', '--workspace', ws, '--email', 'gone@example.com', '--json').json();
      const b = run('admin', 'create', '--workspace', ws, '--email', 'gone2@example.com', '--json').json();
      const list = run('admin', 'list', '--workspace', ws, '--json');
      assert.ok(!list.stdout.includes('scrypt'));
      assert.ok(list.json().some((x: { id: string }) => x.id === a.admin_id));
      assert.equal(run('admin', 'remove', '--workspace', ws, 'gone@example.com').status, 0);
      assert.equal(run('admin', 'remove', '--workspace', ws, b.admin_id, '--json').json().id, b.admin_id);
      const after = run('admin', 'list', '--workspace', ws, '--json').json();
      assert.ok(!after.some((x: { id: string }) => x.id === a.admin_id || x.id === b.admin_id));
      const again = run('admin', 'remove', '--workspace', ws, 'gone@example.com');
      assert.equal(again.status, 2);
      assert.match(again.stderr, /no admin gone@example.com/);
    });

    it("another workspace's admin cannot be removed through this workspace", () => {
      const a = run('admin', 'create', '--workspace', other, '--email', 'theirs@example.com', '--json').json();
      const r = run('admin', 'remove', '--workspace', ws, a.admin_id);
      assert.equal(r.status, 2);
      assert.ok(
        run('admin', 'list', '--workspace', other, '--json')
          .json()
          .some((x: { id: string }) => x.id === a.admin_id),
      );
    });
  });
}
