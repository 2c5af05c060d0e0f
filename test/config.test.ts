/** Every setting is validated with a message that says how to fix it; the settings page's table is generated from the schema. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { withSettingsTable } from '../scripts/readme-settings.js';
import { loadConfig, readSettings, SETTINGS } from '../src/config.js';
import { createServices } from '../src/services.js';
import { createTestDatabase } from './helpers/databases.js';
import { TEST_SECRET } from './helpers/harness.js';

describe('settings', () => {
  it('defaults are safe: test environment, SQLite under ./data, loopback, port 8080', () => {
    const c = loadConfig({});
    assert.equal(c.env, 'test');
    assert.equal(c.databaseUrl, 'sqlite:./data/wsops.db');
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.port, 8080);
    assert.equal(c.allowPrivateWebhooks, false);
    assert.equal(c.rateLimitPerSecond, 50);
    assert.equal(c.rateLimitBurst, 100);
    assert.equal(c.maxKeys, 20);
    assert.equal(c.requestTimeoutMs, 30_000, 'a whole request within 30 s');
    assert.equal(c.headersTimeoutMs, 10_000);
    assert.equal(c.keepAliveTimeoutMs, 5000);
    assert.equal(c.maxConnections, 10_000);
    assert.equal(c.authFailuresPerMinute, 20);
    assert.equal(c.sqliteMmapMb, 2047, "the SQLite read connection maps the file, up to SQLite's ceiling");
    assert.equal(c.keyCache, true);
    assert.equal(loadConfig({ WSOPS_KEY_CACHE: 'off' }).keyCache, false);
    assert.equal(loadConfig({}).deletionRetentionDays, 90, 'the deletions feed keeps tombstones 90 days unless told');
    assert.equal(loadConfig({ WSOPS_DELETION_RETENTION_DAYS: '30' }).deletionRetentionDays, 30);
    assert.equal(
      loadConfig({ WSOPS_REQUEST_TIMEOUT_MS: '2000' }).headersTimeoutMs,
      2000,
      'headers default to the request deadline when it is lower',
    );
  });

  for (const [env, pattern] of [
    [{ WSOPS_ENV: 'prod' }, /WSOPS_ENV must be live or test/],
    [{ WSOPS_PORT: '80a' }, /WSOPS_PORT must be a whole number/],
    [{ WSOPS_PORT: '70000' }, /WSOPS_PORT/],
    [{ WSOPS_DATABASE_URL: 'mysql://x' }, /WSOPS_DATABASE_URL must be sqlite:PATH or postgres/],
    [{ WSOPS_SECRET: 'short' }, /at least 32 characters/],
    [{ WSOPS_ENV: 'live', WSOPS_SECRET: 'x'.repeat(32), WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' }, /refused when WSOPS_ENV=live/],
    [{ WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'maybe' }, /must be true or false/],
    [{ WSOPS_BASE_URL: 'ftp://x' }, /WSOPS_BASE_URL must be an http/],
    [{ WSOPS_REDIS_URL: 'localhost:6379' }, /redis:\/\//],
    [{ WSOPS_RATE_LIMIT_BURST: '0' }, /WSOPS_RATE_LIMIT_BURST/],
    [{ WSOPS_MAX_KEYS: '-1' }, /WSOPS_MAX_KEYS/],
    [{ WSOPS_LOG_LEVEL: 'loud' }, /WSOPS_LOG_LEVEL/],
    [{ WSOPS_OPERATOR_TOKEN: 'abc' }, /WSOPS_OPERATOR_TOKEN must be at least 32 characters; got 3. Make one with `openssl rand -hex 32`/],
    [{ WSOPS_REQUEST_TIMEOUT_MS: '60000' }, /WSOPS_REQUEST_TIMEOUT_MS must be a whole number from 100 to 30000/],
    [{ WSOPS_REQUEST_TIMEOUT_MS: '0' }, /WSOPS_REQUEST_TIMEOUT_MS/],
    [{ WSOPS_REQUEST_TIMEOUT_MS: '5000', WSOPS_HEADERS_TIMEOUT_MS: '8000' }, /must not exceed WSOPS_REQUEST_TIMEOUT_MS/],
    [{ WSOPS_KEEP_ALIVE_TIMEOUT_MS: '10' }, /WSOPS_KEEP_ALIVE_TIMEOUT_MS/],
    [{ WSOPS_MAX_CONNECTIONS: '0' }, /WSOPS_MAX_CONNECTIONS/],
    [{ WSOPS_AUTH_FAILURES_PER_MINUTE: '0' }, /WSOPS_AUTH_FAILURES_PER_MINUTE/],
    [{ WSOPS_SQLITE_MMAP_MB: '-1' }, /WSOPS_SQLITE_MMAP_MB must be a whole number from 0 to 2047/],
    [{ WSOPS_SQLITE_MMAP_MB: '4096' }, /WSOPS_SQLITE_MMAP_MB must be a whole number from 0 to 2047/],
    [{ WSOPS_SQLITE_MMAP_MB: '1e3' }, /WSOPS_SQLITE_MMAP_MB/],
    [{ WSOPS_KEY_CACHE: 'false' }, /WSOPS_KEY_CACHE must be on or off; got "false"/],
    [{ WSOPS_DELETION_RETENTION_DAYS: '29' }, /WSOPS_DELETION_RETENTION_DAYS must be a whole number from 30 to 3650/],
    [{ WSOPS_SMTP_URL: 'mail.example.com:587' }, /WSOPS_SMTP_URL must be smtp:\/\/USER:PASSWORD@HOST:587 \(STARTTLS\) or smtps:\/\//],
    [{ WSOPS_SMTP_URL: 'https://mail.example.com' }, /WSOPS_SMTP_URL must be smtp:\/\//],
    [{ WSOPS_SMTP_URL: 'smtps://mail.example.com:465' }, /WSOPS_ALERT_FROM is required with WSOPS_SMTP_URL/],
    [{ WSOPS_SMTP_URL: 'smtps://mail.example.com:465', WSOPS_ALERT_FROM: 'alerts' }, /WSOPS_ALERT_FROM must be an email address/],
    [{ WSOPS_ALERT_FROM: 'wsops <alerts>' }, /WSOPS_ALERT_FROM must be an email address/],
  ] as const) {
    it(`refuses ${JSON.stringify(env)}`, () => {
      assert.throws(() => loadConfig(env), pattern);
    });
  }

  it("the settings page's table is the one generated from the schema (run `npm run readme-settings`), and the README links it", () => {
    const page = readFileSync(new URL('../docs/guide/settings.md', import.meta.url), 'utf8');
    assert.equal(withSettingsTable(page), page, 'docs/guide/settings.md settings table drifted: run `npm run readme-settings`');
    for (const s of Object.values(SETTINGS))
      assert.ok(page.includes(`| \`${s.env}\` |`), `${s.env} is missing from docs/guide/settings.md`);
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    assert.match(readme, /## Settings\n[^#]*\]\(docs\/guide\/settings\.md\)/, "the README's Settings section links the page");
  });

  it('each documented default is the value in force when the variable is unset', () => {
    const unset = loadConfig({});
    for (const [key, s] of Object.entries(SETTINGS)) {
      if (!('default' in s) || typeof s.default !== 'string') continue;
      const explicit = loadConfig({ [s.env]: s.default });
      assert.deepEqual(explicit[key as keyof typeof explicit], unset[key as keyof typeof unset], s.env);
    }
    assert.equal(loadConfig({ WSOPS_PORT: '9000' }).baseUrl, 'http://localhost:9000', 'WSOPS_BASE_URL follows WSOPS_PORT');
  });

  it('every wrong setting is reported at once, one line each, and a derived default does not repeat a refusal', () => {
    assert.throws(
      () => loadConfig({ WSOPS_PORT: 'eighty', WSOPS_ENV: 'prod', WSOPS_KEY_CACHE: 'false' }),
      (err: Error) => {
        assert.deepEqual(err.message.split('\n'), [
          'WSOPS_PORT must be a whole number from 0 to 65535; got "eighty"',
          'WSOPS_ENV must be live or test; got "prod"',
          'WSOPS_KEY_CACHE must be on or off; got "false"',
        ]);
        return true;
      },
    );
  });

  it('a refusal never shows a secret, and shows a database or Redis address without its password', () => {
    for (const [env, secret] of [
      { WSOPS_SECRET: 'hunter2-short' },
      { WSOPS_OPERATOR_TOKEN: 'hunter2-hunter2-hunter2-hunter2-hunter2 x' },
      { WSOPS_DATABASE_URL: 'mysql://wsops:hunter2@db/wsops' },
      { WSOPS_REDIS_URL: 'http://default:hunter2@cache:6379' },
      { WSOPS_SMTP_URL: 'http://alerts:hunter2@mail.example.com' },
      { WSOPS_SMTP_URL: 'smtps://alerts:hunter2@mail.example.com:465' },
    ].map((e) => [e, 'hunter2'] as const)) {
      assert.throws(
        () => loadConfig(env),
        (err: Error) => !err.message.includes(secret),
      );
    }
  });

  it('the settings in force show each value and where it came from, secrets hidden and passwords redacted', () => {
    const { inForce } = readSettings({
      WSOPS_DATABASE_URL: 'postgres://wsops:hunter2@127.0.0.1:5432/wsops',
      WSOPS_SECRET: 'hunter2'.repeat(6),
      WSOPS_LOG_LEVEL: 'trace',
      WSOPS_SMTP_URL: 'smtps://alerts%40example.com:hunter2@smtp.example.com:465',
      WSOPS_ALERT_FROM: 'wsops <alerts@example.com>',
    });
    const by = Object.fromEntries(inForce.map((s) => [s.env, s]));
    assert.deepEqual(by.WSOPS_DATABASE_URL, {
      env: 'WSOPS_DATABASE_URL',
      value: 'postgres://wsops:***@127.0.0.1:5432/wsops',
      from: 'environment',
    });
    assert.deepEqual(by.WSOPS_SECRET, { env: 'WSOPS_SECRET', value: '(set, hidden)', from: 'environment' });
    assert.deepEqual(by.WSOPS_PORT, { env: 'WSOPS_PORT', value: '8080', from: 'default' });
    assert.deepEqual(by.WSOPS_OPERATOR_TOKEN, { env: 'WSOPS_OPERATOR_TOKEN', value: '(unset)', from: 'unset' });
    assert.equal(by.WSOPS_LOG_LEVEL?.value, 'trace', 'trace is accepted, and documented');
    assert.equal(by.WSOPS_SMTP_URL?.value, 'smtps://alerts%40example.com:***@smtp.example.com:465');
    assert.ok(!JSON.stringify(inForce).includes('hunter2'));
    assert.equal(inForce.length, Object.keys(SETTINGS).length);
  });
});

describe('WSOPS_SQLITE_MMAP_MB', () => {
  for (const [setting, bytes] of [
    [undefined, 2047 * 1024 * 1024],
    ['0', 0],
    ['64', 64 * 1024 * 1024],
  ] as const) {
    it(`${setting ?? 'unset'}: the read connection maps ${bytes} bytes, the writer none`, async () => {
      const db = await createTestDatabase('sqlite');
      const services = await createServices(
        loadConfig({
          WSOPS_DATABASE_URL: db.url,
          WSOPS_SECRET: TEST_SECRET,
          ...(setting === undefined ? {} : { WSOPS_SQLITE_MMAP_MB: setting }),
        }),
      );
      try {
        assert.equal(services.database.sqliteReader?.pragma('mmap_size', { simple: true }), bytes);
        assert.equal(services.database.sqlite?.pragma('mmap_size', { simple: true }), 0);
      } finally {
        await services.close();
        await db.drop();
      }
    });
  }
});
