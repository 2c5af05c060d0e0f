/**
 * What works once, raced across two real API processes on one database (docs/guarantees.md):
 * a sign-in link, a break-glass link, an authenticator code's 30-second step, a recovery code,
 * a WebAuthn challenge and a passkey's signature counter. The same secret is sent from several
 * requests at once, over both processes, through the console forms a browser posts; exactly one
 * may sign in. Pending sessions are opened through the harness's app (sessions live in the
 * database, so either process accepts them). Every request comes from its own address (the
 * processes trust X-Forwarded-For from the test, as from a load balancer), so the sign-in
 * throttle, which counts each refusal of the rounds before, is never what refuses one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { issueBreakGlassLink } from '../../src/sign-in/break-glass.js';
import { enrolTotp, newTotpSecret, totpCode } from '../../src/sign-in/second-factor.js';
import { loadSession } from '../../src/sign-in/sessions.js';
import { createAdminLink } from '../../src/sign-in/sign-in-links.js';
import type { ApiProcesses } from '../helpers/api-processes.js';
import { encodeForm, type SignedInAdmin, sessionCookieOf, signedInAdmin, TEST_PASSWORD } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { type HttpAnswer, postForm, Rounds, spread, startRacers } from '../helpers/races.js';
import { SoftwareAuthenticator } from '../helpers/software-authenticator.js';

const ROUNDS = 5;
const BASE = 'http://localhost:8080';
const HOST = new URL(BASE).host;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const SECOND_FACTOR = '/console/sign-in/second-factor';

const statuses = (answers: readonly HttpAnswer[]) => answers.map((a) => a.status).join(' ');
/** A second step that signed in: a new session, sent on to the page asked for (not back to sign-in). */
const signedIn = (a: HttpAnswer) => a.status === 303 && a.cookie !== undefined && !a.location.startsWith('/console/sign-in');

interface Pending {
  cookie: string;
  csrf: string;
}

for (const dialect of DIALECTS) {
  describe(`single use across two API processes [${dialect}]`, () => {
    let h: Harness;
    let procs: ApiProcesses;
    let address = 0;
    before(async () => {
      h = await createHarness(dialect, { WSOPS_BASE_URL: BASE });
      // The processes run on the real clock: sessions and codes made here must match it.
      h.clock.set(Date.now());
      procs = await startRacers(h.databaseUrl, { WSOPS_BASE_URL: BASE, WSOPS_TRUSTED_PROXIES: '127.0.0.1/32' });
    });
    after(async () => {
      await procs?.stop();
      await h?.close();
    });

    const nextAddress = () => `10.70.${Math.floor(address / 200)}.${(address++ % 200) + 1}`;

    /** The password step through the harness's app: a pending session waiting for the second factor. */
    async function passwordStep(email: string): Promise<Pending> {
      const r = await h.app.inject({
        method: 'POST',
        url: '/console/sign-in',
        headers: FORM,
        remoteAddress: nextAddress(),
        payload: encodeForm({ email, password: TEST_PASSWORD, next: '/console/keys' }),
      });
      assert.match(String(r.headers.location), /^\/console\/sign-in\/second-factor/, r.body);
      const cookie = sessionCookieOf(r.headers) as string;
      const loaded = await loadSession(h.services.database.db, cookie.split('=')[1] ?? '', h.clock());
      assert.ok(loaded?.session.secondFactorPending);
      return { cookie, csrf: loaded.session.csrfToken };
    }

    /** A console form posted to a process from an address of its own. */
    const post = (url: string, form: Record<string, string>, cookie?: string) =>
      postForm(url, HOST, form, cookie, { 'x-forwarded-for': nextAddress() });

    /** The second step's form posted to a process. */
    const secondStep = (url: string, pending: Pending, form: Record<string, string>) =>
      post(`${url}${SECOND_FACTOR}`, { _csrf: pending.csrf, next: '/console/keys', ...form }, pending.cookie);

    /** Asks the harness's app for WebAuthn options (a form post with the CSRF token, as console.js does). */
    async function options(path: string, cookie: string, csrf: string) {
      const r = await h.app.inject({ method: 'POST', url: path, headers: { ...FORM, cookie }, payload: encodeForm({ _csrf: csrf }) });
      assert.equal(r.statusCode, 200, r.body);
      return JSON.parse(r.body) as { challenge: string };
    }

    /** An admin (own workspace) with an authenticator app enrolled 90 s ago, so the current code is a later step. */
    async function adminWithTotp(): Promise<{ admin: SignedInAdmin; secret: string; recoveryCodes: string[] }> {
      const ws = await h.workspace({ seed: false });
      const admin = await signedInAdmin(h, ws);
      const { secret } = newTotpSecret(admin.email);
      const enrolledAt = Date.now() - 90_000;
      const enrolled = await enrolTotp(h.services.database.db, {
        adminId: admin.adminId,
        workspaceId: ws,
        actor: 'test',
        secret,
        code: totpCode(secret, enrolledAt),
        now: enrolledAt,
        box: h.services.secretBox,
      });
      assert.ok(enrolled.ok);
      return { admin, secret, recoveryCodes: enrolled.recoveryCodes };
    }

    const auditCount = async (target: string, action: string) =>
      (
        await h.services.database.db
          .selectFrom('audit_events')
          .select('id')
          .where('target', '=', target)
          .where('action', '=', action)
          .execute()
      ).length;

    it('a sign-in link followed six times at once over both processes sets one password and opens one session', async () => {
      const rounds = new Rounds(ROUNDS);
      for (let r = 0; r < ROUNDS; r++) {
        const ws = await h.workspace({ seed: false });
        const link = await createAdminLink(h.services.database, {
          workspaceId: ws,
          email: `link-${r}@example.com`,
          actor: 'cli',
          now: h.clock(),
        });
        const answers = await spread(6, procs.publicUrls, (url) =>
          post(`${url}/console/link/${link.token}`, { password: TEST_PASSWORD, confirm: TEST_PASSWORD }),
        );
        const opened = answers.filter((a) => a.status === 303 && a.cookie).length;
        const refused = answers.filter((a) => a.status === 410).length;
        const sessions = (
          await h.services.database.db.selectFrom('console_sessions').select('id').where('admin_id', '=', link.admin.id).execute()
        ).length;
        rounds.record(
          r,
          opened === 1 && refused === 5 && sessions === 1,
          `${opened} opened, ${sessions} sessions; statuses ${statuses(answers)}`,
        );
      }
      assert.equal(rounds.broken.length, 0, rounds.summary('sign-in link'));
    });

    it('a break-glass link followed six times at once over both processes signs in once', async () => {
      const rounds = new Rounds(ROUNDS);
      for (let r = 0; r < ROUNDS; r++) {
        const ws = await h.workspace({ seed: false });
        const admin = await signedInAdmin(h, ws);
        const link = await issueBreakGlassLink(h.services.database.db, {
          workspaceId: ws,
          email: admin.email,
          reason: 'the identity provider is down',
          actor: 'cli',
          now: h.clock(),
        });
        const answers = await spread(6, procs.publicUrls, (url) => post(`${url}/console/link/${link.token}`, {}));
        const opened = answers.filter((a) => a.status === 303 && a.cookie).length;
        const used = await auditCount(admin.adminId, 'admin.break_glass_used');
        rounds.record(r, opened === 1 && used === 1, `${opened} opened, ${used} uses audited; statuses ${statuses(answers)}`);
      }
      assert.equal(rounds.broken.length, 0, rounds.summary('break-glass link'));
    });

    it("an authenticator code given by four pending sign-ins at once over both processes signs in one: the code's step is used once", async () => {
      const rounds = new Rounds(ROUNDS);
      for (let r = 0; r < ROUNDS; r++) {
        const { admin, secret } = await adminWithTotp();
        const pending = await Promise.all(Array.from({ length: 4 }, () => passwordStep(admin.email)));
        const code = totpCode(secret, Date.now());
        const answers = await spread(4, procs.publicUrls, (url, i) => secondStep(url, pending[i] as Pending, { code }));
        const opened = answers.filter(signedIn).length;
        const replayed = answers.filter((a) => a.status === 401 && /already used/.test(a.body)).length;
        rounds.record(r, opened === 1 && replayed === 3, `${opened} signed in, ${replayed} told replayed; statuses ${statuses(answers)}`);
      }
      assert.equal(rounds.broken.length, 0, rounds.summary('authenticator code'));
    });

    it('a recovery code given by four pending sign-ins at once over both processes signs in one and is used once', async () => {
      const rounds = new Rounds(ROUNDS);
      for (let r = 0; r < ROUNDS; r++) {
        const { admin, recoveryCodes } = await adminWithTotp();
        const pending = await Promise.all(Array.from({ length: 4 }, () => passwordStep(admin.email)));
        const answers = await spread(4, procs.publicUrls, (url, i) =>
          secondStep(url, pending[i] as Pending, { code: recoveryCodes[0] as string }),
        );
        const opened = answers.filter(signedIn).length;
        const used = await auditCount(admin.adminId, 'admin.recovery_code_used');
        rounds.record(r, opened === 1 && used === 1, `${opened} signed in, ${used} uses audited; statuses ${statuses(answers)}`);
      }
      assert.equal(rounds.broken.length, 0, rounds.summary('recovery code'));
    });

    /** An admin with a registered passkey of a software authenticator. */
    async function adminWithPasskey(): Promise<{ admin: SignedInAdmin; key: SoftwareAuthenticator }> {
      const ws = await h.workspace({ seed: false });
      const admin = await signedInAdmin(h, ws);
      const key = new SoftwareAuthenticator('localhost', BASE);
      const o = await options('/console/security/passkeys/options', admin.cookie, admin.csrf);
      const added = await admin.post('/console/security/passkeys', { name: 'Laptop', response: key.register(o) });
      assert.equal(added.status, 201, added.body);
      return { admin, key };
    }

    it("a passkey's answer to one challenge sent four times at once over both processes signs in once: the challenge is taken once", async () => {
      const rounds = new Rounds(ROUNDS);
      for (let r = 0; r < ROUNDS; r++) {
        const { admin, key } = await adminWithPasskey();
        const pending = await passwordStep(admin.email);
        const answer = key.assert(await options(`${SECOND_FACTOR}/passkey/options`, pending.cookie, pending.csrf));
        const answers = await spread(4, procs.publicUrls, (url) => secondStep(url, pending, { response: answer }));
        const opened = answers.filter(signedIn).length;
        rounds.record(r, opened === 1, `${opened} signed in; statuses ${statuses(answers)}`);
      }
      assert.equal(rounds.broken.length, 0, rounds.summary('WebAuthn challenge'));
    });

    it("a cloned passkey answering two sign-ins' challenges with one counter value at once over both processes signs in one: the counter moves once", async () => {
      const rounds = new Rounds(ROUNDS);
      for (let r = 0; r < ROUNDS; r++) {
        const { admin, key } = await adminWithPasskey();
        const pending = await Promise.all(Array.from({ length: 4 }, () => passwordStep(admin.email)));
        const challenges = await Promise.all(pending.map((p) => options(`${SECOND_FACTOR}/passkey/options`, p.cookie, p.csrf)));
        // Every copy signs with the same counter: only one use may move the stored counter to it.
        const counter = key.counter + 1;
        const replies = challenges.map((c) => key.clone().assert(c, { counter }));
        const answers = await spread(4, procs.publicUrls, (url, i) =>
          secondStep(url, pending[i] as Pending, { response: replies[i] as string }),
        );
        const opened = answers.filter(signedIn).length;
        rounds.record(r, opened === 1, `${opened} signed in; statuses ${statuses(answers)}`);
      }
      assert.equal(rounds.broken.length, 0, rounds.summary('passkey counter'));
    });
  });
}
