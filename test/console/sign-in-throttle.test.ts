/**
 * The sign-in throttle under attack: concurrent wrong passwords cannot overshoot it, a guesser
 * is held at its addresses, and the admin still gets in, in process memory and through Redis.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { hashPassword } from '../../src/sign-in/passwords.js';
import { SIGN_IN_LIMITS } from '../../src/sign-in/sign-in-throttle.js';
import { encodeForm, sessionCookieOf, signedInAdmin } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const REDIS_URL = process.env.WSOPS_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

for (const dialect of DIALECTS) {
  for (const store of ['memory', 'redis'] as const) {
    describe(`console sign-in throttle [${dialect}, ${store}]`, () => {
      let h: Harness;
      let ws: string;
      // Redis outlives a run: every run uses addresses of its own.
      const run = randomBytes(2);
      let n = 0;
      const address = () => `10.${run[0]}.${run[1]}.${++n}`;
      before(async () => {
        h = await createHarness(dialect, store === 'redis' ? { WSOPS_REDIS_URL: REDIS_URL } : {});
        ws = await h.workspace({ seed: false });
      });
      after(() => h.close());

      /**
       * An admin whose password is stored at a low scrypt cost (N=2^10; a hash carries its own
       * parameters): the tests that send dozens of guesses at one account check the throttle's
       * budgets, which do not depend on the cost, without spending a second of CPU per ten guesses.
       * The concurrency test keeps the real cost, so its requests overlap the hashing.
       */
      const cheaplyHashedAdmin = async () => {
        const admin = await signedInAdmin(h, ws);
        await h.services.database.db
          .updateTable('console_admins')
          .set({ password_hash: await hashPassword(admin.password, { N: 2 ** 10, r: 8, p: 1, keylen: 32 }) })
          .where('id', '=', admin.adminId)
          .execute();
        return admin;
      };

      const signIn = (email: string, password: string, ip: string) =>
        h.app.inject({
          method: 'POST',
          url: '/console/sign-in',
          headers: FORM,
          remoteAddress: ip,
          payload: encodeForm({ email, password }),
        });

      it('60 concurrent wrong passwords for one account from one address: 5 are checked (401), 55 are refused (429) before the hash runs', async () => {
        const admin = await signedInAdmin(h, ws);
        const ip = address();
        const responses = await Promise.all(Array.from({ length: 60 }, (_, i) => signIn(admin.email, `wrong password ${i}`, ip)));
        assert.deepEqual(tally(responses.map((r) => r.statusCode)), { 401: 5, 429: 55 });
        const refused = responses.find((r) => r.statusCode === 429);
        assert.match(String(refused?.body), /Too many wrong passwords/);
        assert.equal(refused?.headers['retry-after'], String((SIGN_IN_LIMITS.windowMs / SIGN_IN_LIMITS.perAccountAddress) * 0.001));
      });

      it('60 concurrent wrong passwords for 60 accounts from one address: 20 are checked, 40 refused', async () => {
        const ip = address();
        const responses = await Promise.all(
          Array.from({ length: 60 }, (_, i) => signIn(`nobody${i}.${run.toString('hex')}@example.com`, 'wrong password', ip)),
        );
        assert.deepEqual(tally(responses.map((r) => r.statusCode)), { 401: 20, 429: 40 });
      });

      it('a guesser is held at its address; the admin with the right password from a new address gets in', async () => {
        const admin = await cheaplyHashedAdmin();
        const attacker = address();
        for (let i = 0; i < 5; i++) assert.equal((await signIn(admin.email, 'wrong password', attacker)).statusCode, 401);
        for (const password of ['wrong password', admin.password]) {
          const held = await signIn(admin.email, password, attacker);
          assert.equal(held.statusCode, 429, 'the guesser is held, even with the right password');
          assert.equal(held.headers['retry-after'], '180', 'one more try every 3 minutes');
          assert.match(held.body, /try again in 3 minutes/);
        }
        const owner = await signIn(admin.email, admin.password, address());
        assert.equal(owner.statusCode, 303, owner.body);
        assert.ok(sessionCookieOf(owner.headers));
        h.clock.advance(180_000);
        assert.equal((await signIn(admin.email, 'wrong password', attacker)).statusCode, 401, 'slowed down, not blocked for good');
        assert.equal((await signIn(admin.email, 'wrong password', attacker)).statusCode, 429);
      });

      it('a guesser spread over many addresses is slowed down for the account, and the admin still gets in from an address they used before', async () => {
        const admin = await cheaplyHashedAdmin();
        const home = address();
        assert.equal((await signIn(admin.email, admin.password, home)).statusCode, 303, 'signed in from home once');
        const per = SIGN_IN_LIMITS.perAccountAddress;
        const addresses = Array.from({ length: SIGN_IN_LIMITS.perAccount / per }, address);
        const statuses = await Promise.all(addresses.flatMap((ip) => Array.from({ length: per }, () => signIn(admin.email, 'guess', ip))));
        assert.deepEqual(tally(statuses.map((r) => r.statusCode)), { 401: SIGN_IN_LIMITS.perAccount });
        const fresh = await signIn(admin.email, 'another guess', address());
        assert.equal(fresh.statusCode, 429, 'a new address waits: the account is being guessed at');
        assert.equal(fresh.headers['retry-after'], '18', 'one more try for the account every 18 s');
        const owner = await signIn(admin.email, admin.password, home);
        assert.equal(owner.statusCode, 303, 'the admin at an address they signed in from before gets in');
        assert.equal((await signIn(admin.email, admin.password, address())).statusCode, 429, 'but not yet from a new address');
        h.clock.advance(18_000);
        assert.equal((await signIn(admin.email, admin.password, address())).statusCode, 303, 'slowed down, not locked out');
      });

      it('right passwords from one address, many in a row and at once, are never throttled', async () => {
        const admin = await cheaplyHashedAdmin();
        const ip = address();
        for (let i = 0; i < 8; i++) assert.equal((await signIn(admin.email, admin.password, ip)).statusCode, 303);
        const together = await Promise.all(Array.from({ length: 4 }, () => signIn(admin.email, admin.password, ip)));
        assert.deepEqual(tally(together.map((r) => r.statusCode)), { 303: 4 });
      });
    });
  }
}
