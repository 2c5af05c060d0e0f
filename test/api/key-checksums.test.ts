/**
 * Keys a scanner can find (issue 29, point 1): the last six characters of the secret are the
 * base62 CRC32 of everything before them, checked before any lookup; keys made before keep working.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { crc32 } from 'node:zlib';
import { randomBase62 } from '../../src/ids.js';
import { base62Checksum, hasValidChecksum, KEY_REGEX_SOURCE, parseKey } from '../../src/keys/key-format.js';
import { hashSecret } from '../../src/keys/key-hashing.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { ROOT } from '../helpers/processes.js';

/** The same key with one character of its random part changed: what a typo makes. */
function mistype(key: string): string {
  const i = key.length - 10;
  return key.slice(0, i) + (key[i] === 'a' ? 'b' : 'a') + key.slice(i + 1);
}

describe('key checksum rule', () => {
  it('the checksum is CRC32 of everything before it, base62 with leading zeros, six characters', () => {
    const body = `svc_sk_live_${randomBase62(16)}_${randomBase62(37)}`;
    let n = crc32(body);
    let expected = '';
    for (let i = 0; i < 6; i++) {
      expected = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'[n % 62] + expected;
      n = Math.floor(n / 62);
    }
    assert.equal(base62Checksum(body), expected);
    assert.equal(base62Checksum(''), '000000', 'CRC32 of nothing is 0: padded to six characters');
    assert.ok(hasValidChecksum(body + expected));
    assert.ok(!hasValidChecksum(mistype(body + expected)));
  });

  it('the published pattern matches a key and no near miss', () => {
    const re = new RegExp(KEY_REGEX_SOURCE);
    const body = `svc_sk_test_${randomBase62(16)}_${randomBase62(37)}`;
    const key = body + base62Checksum(body);
    assert.ok(re.test(`token: ${key}\n`));
    for (const near of [key.replace('_test_', '_prod_'), key.slice(0, -1), `${key}x`, key.replace('svc_sk_', 'svc_pk_'), `x${key}`]) {
      assert.ok(!re.test(near), near);
    }
  });
});

describe('secret scanner (secretlint with the published rule)', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'wsops-secretlint-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('the API keys guide and the portal publish the pattern the server checks, and the checksum rule', async () => {
    const readme = readFileSync(join(ROOT, 'docs/guide/api-keys.md'), 'utf8');
    assert.ok(readme.includes(`  ${KEY_REGEX_SOURCE}\n`), 'docs/guide/api-keys.md shows the regular expression');
    assert.match(readme, /last 6 characters of `<secret>` are the CRC32/);
    const { gettingStartedPage } = await import('../../src/developers/portal-routes.js');
    const portal = gettingStartedPage('http://localhost');
    assert.ok(portal.includes(`<pre>${KEY_REGEX_SOURCE}</pre>`), 'the portal shows the regular expression');
    assert.match(portal, /last 6 characters of <code>&lt;secret&gt;<\/code> are a checksum: the CRC32/);
  });

  it('docs/secretlint/.secretlintrc.json holds the pattern the server checks', () => {
    const config = JSON.parse(readFileSync(join(ROOT, 'docs/secretlint/.secretlintrc.json'), 'utf8'));
    assert.equal(config.rules[0].options.patterns[0].patterns[0], `/${KEY_REGEX_SOURCE}/`);
  });

  it('finds a key committed in a file and ignores a near miss in another', () => {
    const body = `svc_sk_live_${randomBase62(16)}_${randomBase62(37)}`;
    const key = body + base62Checksum(body);
    writeFileSync(join(dir, 'leaked.env'), `WSOPS_API_KEY=${key}\n`);
    // One character short, and of an environment that does not exist: not a key.
    writeFileSync(join(dir, 'near-miss.env'), `WSOPS_API_KEY=${key.slice(0, -1)}\nOTHER=${key.replace('_live_', '_prod_')}\n`);
    const scan = (file: string) =>
      spawnSync(
        process.execPath,
        [
          join(ROOT, 'node_modules/secretlint/bin/secretlint.js'),
          '--secretlintrc',
          join(ROOT, 'docs/secretlint/.secretlintrc.json'),
          '--format',
          'json',
          file,
        ],
        { cwd: dir, encoding: 'utf8' },
      );
    const leaked = scan('leaked.env');
    assert.equal(leaked.status, 1, `secretlint reports the leak: ${leaked.stdout} ${leaked.stderr}`);
    const messages = JSON.parse(leaked.stdout).flatMap((f: { messages: { ruleId: string; message: string }[] }) => f.messages);
    assert.equal(messages.length, 1);
    assert.equal(messages[0].ruleId, '@secretlint/secretlint-rule-pattern');
    assert.equal(messages[0].loc.start.line, 1);
    const near = scan('near-miss.env');
    assert.equal(near.status, 0, `no report for the near misses: ${near.stdout} ${near.stderr}`);
  });

  it('the checksum rule (@wsops/client/secretlint) reports a real key, and neither a corrupted key nor a look-alike', () => {
    const body = `svc_sk_test_${randomBase62(16)}_${randomBase62(37)}`;
    const key = body + base62Checksum(body);
    // One character of the random part changed: the shape holds, the checksum does not.
    const at = 30;
    const corrupted = key.slice(0, at) + (key[at] === 'x' ? 'y' : 'x') + key.slice(at + 1);
    const lookAlike = `svc_sk_live_${'A'.repeat(16)}_${'0123456789abcdefghijklmnopqrstuvwxyzABCDEFG'}`;
    writeFileSync(join(dir, 'real.env'), `# deploy\nWSOPS_API_KEY=${key}\n`);
    writeFileSync(join(dir, 'corrupted.env'), `WSOPS_API_KEY=${corrupted}\n`);
    writeFileSync(join(dir, 'look-alike.md'), `Example: \`${lookAlike}\`\n`);
    const scan = (file: string, config: string) =>
      spawnSync(
        process.execPath,
        [join(ROOT, 'node_modules/secretlint/bin/secretlint.js'), '--secretlintrc', join(ROOT, config), '--format', 'json', file],
        { cwd: dir, encoding: 'utf8' },
      );
    const checksumRule = 'docs/secretlint/.secretlintrc.checksum.json';
    const real = scan('real.env', checksumRule);
    assert.equal(real.status, 1, `the real key is reported: ${real.stdout} ${real.stderr}`);
    const messages = JSON.parse(real.stdout).flatMap(
      (f: { messages: { ruleId: string; loc: { start: { line: number } } }[] }) => f.messages,
    );
    assert.equal(messages.length, 1);
    assert.equal(messages[0].ruleId, '@wsops/client/secretlint');
    assert.equal(messages[0].loc.start.line, 2);
    for (const file of ['corrupted.env', 'look-alike.md']) {
      const r = scan(file, checksumRule);
      assert.equal(r.status, 0, `${file} is not reported: ${r.stdout} ${r.stderr}`);
      assert.deepEqual(JSON.parse(r.stdout)[0].messages, []);
      // The pattern-only rule cannot tell them apart: it reports both.
      assert.equal(scan(file, 'docs/secretlint/.secretlintrc.json').status, 1, `the pattern rule reports ${file}`);
    }
  });
});

for (const dialect of DIALECTS) {
  describe(`key checksums [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    before(async () => {
      h = await createHarness(dialect);
      ws = await h.workspace({ seed: false });
    });
    after(() => h.close());

    it('a new key ends in the checksum of everything before it', async () => {
      const { key } = await h.key(ws, ['people:read']);
      assert.ok(hasValidChecksum(key), key);
      assert.equal(parseKey(key)?.checksumOk, true);
      assert.equal((await h.get('/api/v1/scopes', key)).status, 200);
    });

    it('a mistyped key is refused with the one identical 401 without touching the database', async () => {
      const { key } = await h.key(ws, ['people:read']);
      const unknown = `svc_sk_test_${randomBase62(16)}_${randomBase62(43)}`;
      await h.get('/api/v1/scopes', unknown); // the legacy-key id set is read once per process
      const before = h.services.keyCache.stats();
      const typo = await h.get('/api/v1/scopes', mistype(key));
      const other = await h.get('/api/v1/scopes', unknown);
      const stats = h.services.keyCache.stats();
      assert.equal(typo.status, 401);
      assert.match(String(typo.headers['www-authenticate']), /^Bearer\b/);
      const { request_id: _a, ...typoBody } = typo.json;
      const { request_id: _b, ...otherBody } = other.json;
      assert.deepEqual(typoBody, otherBody, 'the same body as any other refused key');
      assert.deepEqual(
        [stats.hits + stats.misses + stats.bypassed, before.hits + before.misses + before.bypassed],
        [before.hits + before.misses + before.bypassed, before.hits + before.misses + before.bypassed],
        'no key lookup (neither the cache nor the database) for a key whose checksum is wrong',
      );
    });

    it('a key made before checksums keeps working; a typo in it is still refused', async () => {
      // What migration 0018 found: 43 random characters, `checksummed = 0`. A fresh process
      // (harness) reads the ids of such keys on its first request with a wrong checksum.
      const fresh = await createHarness(dialect);
      try {
        const wsp = await fresh.workspace({ seed: false });
        const keyId = randomBase62(16);
        let secret = randomBase62(43);
        const body = `svc_sk_test_${keyId}_${secret.slice(0, 37)}`;
        if (base62Checksum(body) === secret.slice(37)) secret = `${secret.slice(0, 42)}${secret[42] === 'a' ? 'b' : 'a'}`;
        const now = new Date(fresh.clock()).toISOString();
        await fresh.services.database.db
          .insertInto('api_keys')
          .values({
            key_id: keyId,
            workspace_id: wsp,
            name: 'Old key',
            environment: 'test',
            secret_hash: hashSecret(secret),
            scopes: 'people:read',
            created_at: now,
            expires_at: new Date(fresh.clock() + 30 * 86_400_000).toISOString(),
            revoked_at: null,
            last_used_at: null,
            created_by: 'cli',
            last_used_ip: null,
            allowed_ips: null,
            checksummed: 0,
          })
          .execute();
        const key = `svc_sk_test_${keyId}_${secret}`;
        assert.ok(!hasValidChecksum(key));
        assert.equal((await fresh.get('/api/v1/scopes', key)).status, 200);
        assert.equal((await fresh.get('/api/v1/scopes', mistype(key))).status, 401);
      } finally {
        await fresh.close();
      }
    });
  });
}
