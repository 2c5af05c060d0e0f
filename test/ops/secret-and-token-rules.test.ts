/**
 * Secrets at rest and the operator token: a live deployment refuses to start without
 * WSOPS_SECRET (the master secret must not sit in the database beside what it protects), and
 * an operator token without real entropy is refused at start.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';

const BIN = new URL('../../bin/wsops', import.meta.url).pathname;
const GOOD_TOKEN = '3f9c0e7a51b2d8846c1e0f5a9b7d2c43';

describe('WSOPS_SECRET in a live deployment', () => {
  it('loadConfig refuses WSOPS_ENV=live without WSOPS_SECRET and says how to make one', () => {
    assert.throws(
      () => loadConfig({ WSOPS_ENV: 'live' }),
      (err: Error) =>
        /WSOPS_SECRET is required when WSOPS_ENV=live/.test(err.message) &&
        /stored in the database beside them/.test(err.message) &&
        /openssl rand -hex 32/.test(err.message),
    );
  });

  it('live with a WSOPS_SECRET of 32 characters or more starts; test without one still starts (the secret is generated)', () => {
    assert.equal(loadConfig({ WSOPS_ENV: 'live', WSOPS_SECRET: 'a'.repeat(16) + 'b'.repeat(16) }).env, 'live');
    assert.equal(loadConfig({ WSOPS_ENV: 'test' }).secret, undefined);
  });

  it('a live `wsops serve` without WSOPS_SECRET exits with status 2 and the one-line reason, before touching the database', () => {
    const r = spawnSync(process.execPath, [BIN, 'serve'], {
      env: { ...process.env, WSOPS_ENV: 'live', WSOPS_SECRET: '', WSOPS_DATABASE_URL: 'sqlite:/nonexistent/dir/never.db' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /^wsops: WSOPS_SECRET is required when WSOPS_ENV=live.*openssl rand -hex 32/);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  });
});

describe('WSOPS_OPERATOR_TOKEN must have real entropy', () => {
  for (const [token, pattern] of [
    ['x'.repeat(31), /at least 32 characters; got 31/],
    ['x'.repeat(64), /no real entropy: only 1 distinct character\(s\), at least 8/],
    ['ab'.repeat(32), /only 2 distinct/],
    ['1234567'.repeat(6), /only 7 distinct/],
    [`${GOOD_TOKEN} ${GOOD_TOKEN}`, /must not contain whitespace/],
    ['a1'.repeat(300), /at most 512 characters/],
  ] as const) {
    it(`refuses ${token.length > 40 ? `${token.slice(0, 12)}… (${token.length} chars)` : JSON.stringify(token)} with a reason and how to make a good one`, () => {
      assert.throws(
        () => loadConfig({ WSOPS_OPERATOR_TOKEN: token }),
        (err: Error) => pattern.test(err.message) && /openssl rand -hex 32/.test(err.message),
      );
    });
  }

  it('accepts a random hex token of 32 characters (what `openssl rand -hex 16` prints) and longer ones', () => {
    assert.equal(loadConfig({ WSOPS_OPERATOR_TOKEN: GOOD_TOKEN }).operatorToken, GOOD_TOKEN);
    assert.equal(loadConfig({ WSOPS_OPERATOR_TOKEN: GOOD_TOKEN.repeat(4) }).operatorToken, GOOD_TOKEN.repeat(4));
  });
});

describe('internal listener settings', () => {
  it('WSOPS_INTERNAL_PORT is unset by default (no internal listener) and WSOPS_INTERNAL_HOST defaults to loopback', () => {
    const c = loadConfig({});
    assert.equal(c.internalPort, undefined);
    assert.equal(c.internalHost, '127.0.0.1');
    assert.equal(loadConfig({ WSOPS_INTERNAL_PORT: '9090', WSOPS_INTERNAL_HOST: '10.0.0.5' }).internalPort, 9090);
  });

  for (const [env, pattern] of [
    [{ WSOPS_INTERNAL_PORT: 'metrics' }, /WSOPS_INTERNAL_PORT must be a whole number from 0 to 65535/],
    [{ WSOPS_INTERNAL_PORT: '70000' }, /WSOPS_INTERNAL_PORT must be a whole number/],
    [{ WSOPS_PORT: '9000', WSOPS_INTERNAL_PORT: '9000' }, /WSOPS_INTERNAL_PORT must differ from WSOPS_PORT/],
  ] as const) {
    it(`refuses ${JSON.stringify(env)}`, () => assert.throws(() => loadConfig(env), pattern));
  }
});
