/**
 * While a workspace's password sign-in is off, single sign-on is the only way in: an
 * invitation or a new link for a forgotten password sets no password and opens no session
 * (the page points to single sign-on), an address outside the SSO domain cannot be invited,
 * and the one way around the provider is the operator's audited break-glass link.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { createAdminLink } from '../../src/sign-in/sign-in-links.js';
import { setSso } from '../../src/sign-in/sign-in-rules.js';
import { encodeForm, sessionCookieOf, signedInAdmin, TEST_PASSWORD } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness, TEST_SECRET } from '../helpers/harness.js';

const BIN = new URL('../../bin/wsops', import.meta.url).pathname;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

for (const dialect of DIALECTS) {
  describe(`sign-in links while single sign-on is the only way in [${dialect}]`, () => {
    let h: Harness;
    before(async () => {
      h = await createHarness(dialect);
    });
    after(() => h.close());

    const cli = (...args: string[]) => {
      const r = spawnSync(process.execPath, [BIN, ...args], {
        env: {
          ...process.env,
          WSOPS_DATABASE_URL: h.databaseUrl,
          WSOPS_SECRET: TEST_SECRET,
          WSOPS_LOG_LEVEL: 'silent',
          WSOPS_BASE_URL: 'https://ops.example.com/',
        },
        encoding: 'utf8',
      });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) };
    };

    const passwordSignIn = (ws: string, on: boolean) =>
      setSso(h.services.database.db, {
        workspaceId: ws,
        issuer: 'https://login.example.com',
        clientId: 'wsops-console',
        clientSecret: 'a-client-secret',
        domain: 'example.com',
        createAdmins: false,
        passwordSignIn: on,
        actor: 'cli',
        now: h.clock(),
        box: h.services.secretBox,
      });

    const admin = (ws: string, email: string) =>
      h.services.database.db
        .selectFrom('console_admins')
        .selectAll()
        .where('workspace_id', '=', ws)
        .where('email', '=', email)
        .executeTakeFirst();

    const follow = (token: string, password = TEST_PASSWORD) =>
      h.app.inject({ method: 'POST', url: `/console/link/${token}`, headers: FORM, payload: encodeForm({ password, confirm: password }) });

    const audit = (ws: string, action: string) =>
      h.services.database.db
        .selectFrom('audit_events')
        .selectAll()
        .where('workspace_id', '=', ws)
        .where('action', '=', action)
        .orderBy('seq')
        .execute();

    it('an invitation link, even one issued before password sign-in went off, sets no password and opens no session; its page says to sign in with single sign-on', async () => {
      const ws = await h.workspace({ seed: false });
      const early = await createAdminLink(h.services.database, {
        workspaceId: ws,
        email: 'early@example.com',
        actor: 'cli',
        now: h.clock(),
      });
      await passwordSignIn(ws, false);
      const late = await createAdminLink(h.services.database, {
        workspaceId: ws,
        email: 'late@example.com',
        actor: 'cli',
        now: h.clock(),
      });
      assert.equal(late.ssoOnly, true);
      for (const link of [early, late]) {
        const page = await h.app.inject({ method: 'GET', url: `/console/link/${link.token}` });
        assert.equal(page.statusCode, 403);
        assert.match(page.body, /signs in with single sign-on only/);
        assert.match(page.body, new RegExp(`href="/console/sso/${ws}"`));
        assert.doesNotMatch(page.body, /Choose a password/);
        const r = await follow(link.token);
        assert.equal(r.statusCode, 403, r.body);
        assert.match(r.body, /Sign in with single sign-on/);
        assert.equal(sessionCookieOf(r.headers), undefined, 'no session');
        const row = await admin(ws, link.admin.email);
        assert.equal(row?.password_hash, null, 'no password set');
        const sessions = await h.services.database.db
          .selectFrom('console_sessions')
          .selectAll()
          .where('admin_id', '=', link.admin.id)
          .execute();
        assert.equal(sessions.length, 0);
      }
      // Password sign-in back on: the invitation works as before.
      await passwordSignIn(ws, true);
      const r = await follow(late.token);
      assert.equal(r.statusCode, 303, r.body);
      assert.ok(sessionCookieOf(r.headers));
    });

    it('a new link for a forgotten password neither changes the password nor signs in', async () => {
      const ws = await h.workspace({ seed: false });
      const a = await signedInAdmin(h, ws, { email: 'forgetful@example.com' });
      const before = (await admin(ws, a.email))?.password_hash;
      await passwordSignIn(ws, false);
      const reset = await createAdminLink(h.services.database, {
        workspaceId: ws,
        email: a.email,
        actor: 'cli',
        now: h.clock(),
      });
      const r = await follow(reset.token, 'another password entirely');
      assert.equal(r.statusCode, 403, r.body);
      assert.equal(sessionCookieOf(r.headers), undefined);
      assert.equal((await admin(ws, a.email))?.password_hash, before, 'the password is unchanged');
    });

    it('an address outside the SSO domain cannot be invited, by the CLI or in the console; one inside is added and told to use single sign-on', async () => {
      const ws = await h.workspace({ seed: false });
      const a = await signedInAdmin(h, ws);
      await passwordSignIn(ws, false);
      const outsider = cli('admin', 'create', '--workspace', ws, '--email', 'outsider@attacker.example', '--json');
      assert.equal(outsider.status, 2, outsider.stdout);
      assert.match(outsider.stderr, /outsider@attacker\.example is outside example\.com.*password sign-in is off/);
      assert.equal(await admin(ws, 'outsider@attacker.example'), undefined, 'nothing added');
      const refused = await a.post('/console/admins', { email: 'outsider@attacker.example' });
      assert.equal(refused.status, 400);
      assert.match(refused.body, /outsider@attacker\.example is outside example\.com/);
      const inside = cli('admin', 'create', '--workspace', ws, '--email', 'colleague@example.com', '--json');
      assert.equal(inside.status, 0, inside.stderr);
      assert.deepEqual(
        { url: inside.json().sign_in_url, ssoOnly: inside.json().sso_only },
        { url: `https://ops.example.com/console/sso/${ws}`, ssoOnly: true },
      );
      const human = cli('admin', 'create', '--workspace', ws, '--email', 'colleague@example.com');
      assert.match(human.stdout, /Password sign-in is off for this workspace: no sign-in link is issued/);
      const invited = await a.post('/console/admins', { email: 'another@example.com' });
      assert.equal(invited.status, 201, invited.body);
      assert.match(invited.body, /another@example\.com signs in with single sign-on/);
      assert.doesNotMatch(invited.body, /\/console\/link\//);
    });

    it('wsops admin break-glass says what it does, wants a reason and an existing admin, and its link signs in once without setting a password, audited', async () => {
      const ws = await h.workspace({ seed: false });
      await createAdminLink(h.services.database, {
        workspaceId: ws,
        email: 'oncall@example.com',
        actor: 'cli',
        now: h.clock(),
      });
      await passwordSignIn(ws, false);
      const help = cli('admin', 'break-glass', '--help');
      assert.match(
        help.stdout.replace(/\s+/g, ' '),
        /signs an existing admin in once without SSO or a password, even while password sign-in is off/,
      );
      assert.equal(cli('admin', 'break-glass', '--workspace', ws, '--email', 'oncall@example.com').status, 2, 'no --reason');
      const stranger = cli('admin', 'break-glass', '--workspace', ws, '--email', 'stranger@example.com', '--reason', 'IdP down');
      assert.equal(stranger.status, 2);
      assert.match(stranger.stderr, /stranger@example\.com is not an admin of workspace/);
      const issued = cli(
        'admin',
        'break-glass',
        '--workspace',
        ws,
        '--email',
        'oncall@example.com',
        '--reason',
        'IdP down since 02:00',
        '--json',
      );
      assert.equal(issued.status, 0, issued.stderr);
      const token = String(issued.json().sign_in_url).split('/console/link/')[1] as string;
      const page = await h.app.inject({ method: 'GET', url: `/console/link/${token}` });
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /break-glass link for <strong>oncall@example\.com<\/strong>/);
      const r = await h.app.inject({ method: 'POST', url: `/console/link/${token}`, headers: FORM, payload: '' });
      assert.equal(r.statusCode, 303, r.body);
      const cookie = sessionCookieOf(r.headers);
      assert.ok(cookie);
      assert.equal((await h.app.inject({ method: 'GET', url: '/console/keys', headers: { cookie } })).statusCode, 200);
      assert.equal((await admin(ws, 'oncall@example.com'))?.password_hash, null, 'no password set');
      const again = await h.app.inject({ method: 'POST', url: `/console/link/${token}`, headers: FORM, payload: '' });
      assert.equal(again.statusCode, 410, 'once only');
      const issuedAudit = await audit(ws, 'admin.break_glass_issued');
      assert.equal(issuedAudit.length, 1);
      assert.equal(JSON.parse(issuedAudit[0]?.detail ?? '{}').reason, 'IdP down since 02:00');
      assert.equal(issuedAudit[0]?.actor, 'cli');
      assert.equal((await audit(ws, 'admin.break_glass_used')).length, 1);
      // Password sign-in is still off for everyone else.
      const ordinary = await createAdminLink(h.services.database, {
        workspaceId: ws,
        email: 'oncall@example.com',
        actor: 'cli',
        now: h.clock(),
      });
      assert.equal((await follow(ordinary.token)).statusCode, 403);
    });
  });
}
