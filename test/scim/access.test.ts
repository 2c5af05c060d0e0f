/**
 * Who may call SCIM: a workspace SCIM token, and nothing else. It cannot read /api/v1, an API
 * key cannot call SCIM, a wrong token spends the same failed-authentication budget as a wrong
 * API key, a revoked token stops at once, and one workspace's token never sees another's people.
 * The tokens are made and revoked with the CLI as an operator would.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createScimToken, revokeScimToken } from '../../src/scim/tokens.js';
import { DIALECTS } from '../helpers/databases.js';
import { TEST_SECRET } from '../helpers/harness.js';
import { runWsops } from '../helpers/processes.js';
import { ERROR, type ScimServer, startScimServer, USER } from './helpers.js';

for (const dialect of DIALECTS) {
  describe(`who may call SCIM [${dialect}]`, () => {
    let s: ScimServer;
    before(async () => {
      s = await startScimServer(dialect, { WSOPS_AUTH_FAILURES_PER_MINUTE: '5' });
    });
    after(async () => s.close());

    it('a SCIM token cannot read /api/v1, and an API key cannot call SCIM', async () => {
      const api = await s.api('/people', s.token);
      assert.equal(api.status, 401);
      for (const path of ['/Users', '/ServiceProviderConfig', '/Groups']) {
        const res = await s.scim('GET', path, undefined, s.apiKey);
        assert.equal(res.status, 401, path);
        assert.deepEqual(res.json.schemas, [ERROR]);
        assert.equal(res.json.status, '401');
        assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
      }
      const write = await s.scim('POST', '/Users', { schemas: [USER], userName: 'intruder@example.com' }, s.apiKey);
      assert.equal(write.status, 401);
      s.h.clock.advance(60_000);
    });

    it("one workspace's token never sees or changes another's people", async () => {
      const other = await s.h.workspace();
      const theirs = await s.newToken(other);
      const mine = (await s.scim('GET', '/Users?count=200')).json.Resources.map((u: { id: string }) => u.id) as string[];
      const seen = (await s.scim('GET', '/Users?count=200', undefined, theirs.token)).json.Resources.map(
        (u: { id: string }) => u.id,
      ) as string[];
      assert.ok(mine.length > 0 && seen.length > 0);
      assert.equal(mine.filter((id) => seen.includes(id)).length, 0);
      const target = mine[0] as string;
      assert.equal((await s.scim('GET', `/Users/${target}`, undefined, theirs.token)).status, 404);
      assert.equal(
        (
          await s.scim(
            'PATCH',
            `/Users/${target}`,
            { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', value: { active: false } }] },
            theirs.token,
          )
        ).status,
        404,
      );
      assert.equal((await s.scim('DELETE', `/Users/${target}`, undefined, theirs.token)).status, 404);
      assert.equal((await s.api(`/people/${target}`)).json.status !== undefined, true, 'untouched');
    });

    it('a wrong token is throttled like a wrong API key: the address budget is shared, a valid credential waits too', async () => {
      s.h.clock.advance(120_000);
      const wrong = `${s.token.slice(0, -8)}AAAAAAAA`;
      for (let i = 0; i < 5; i++) assert.equal((await s.scim('GET', '/Users', undefined, wrong)).status, 401);
      const throttled = await s.scim('GET', '/Users', undefined, wrong);
      assert.equal(throttled.status, 429);
      assert.deepEqual(throttled.json.schemas, [ERROR]);
      assert.ok(Number(throttled.headers.get('retry-after')) >= 1);
      assert.equal(
        (await s.scim('GET', '/Users', undefined, s.token)).status,
        429,
        'a right token from a throttled address learns nothing',
      );
      assert.equal((await s.api('/people')).status, 429, 'the same budget as API keys');
      s.h.clock.advance(60_000);
      assert.equal((await s.scim('GET', '/Users?count=1', undefined, s.token)).status, 200);
    });

    it('a revoked token is refused from the next request on, and both are in the audit trail', async () => {
      s.h.clock.advance(120_000);
      const t = await s.newToken(s.ws);
      assert.equal((await s.scim('GET', '/Users?count=1', undefined, t.token)).status, 200);
      await revokeScimToken(s.h.services.database.db, s.ws, t.tokenId, s.h.clock(), 'cli');
      assert.equal((await s.scim('GET', '/Users?count=1', undefined, t.token)).status, 401);
      const actions = await s.h.services.database.db
        .selectFrom('audit_events')
        .select('action')
        .where('target', '=', t.tokenId)
        .orderBy('seq')
        .execute();
      assert.deepEqual(
        actions.map((a) => a.action),
        ['scim.token_created', 'scim.token_revoked'],
      );
    });

    it('a token of the other environment is refused like any wrong token', async () => {
      s.h.clock.advance(120_000);
      const live = await createScimToken(s.h.services.database, {
        workspaceId: s.ws,
        environment: 'live',
        locationId: s.locationId,
        createdBy: 'cli',
        now: s.h.clock(),
      });
      const res = await s.scim('GET', '/Users?count=1', undefined, live.token);
      assert.equal(res.status, 401);
      assert.deepEqual(res.json.schemas, [ERROR]);
    });

    it('the CLI creates a token shown once, lists it without its secret, and revokes it', async () => {
      s.h.clock.advance(120_000);
      const env = { WSOPS_DATABASE_URL: s.h.databaseUrl, WSOPS_SECRET: TEST_SECRET };
      const created = JSON.parse(
        await runWsops(['scim', 'token', 'create', '--workspace', s.ws, '--location', s.locationId, '--name', 'Entra ID', '--json'], env),
      );
      assert.match(created.token, /^svc_scim_test_[0-9A-Za-z]{16}_[0-9A-Za-z]{43}$/);
      assert.match(created.scim_base_url, /\/scim\/v2$/);
      assert.equal((await s.scim('GET', '/Users?count=1', undefined, created.token)).status, 200);
      const listed = await runWsops(['scim', 'token', 'list', '--workspace', s.ws, '--json'], env);
      assert.ok(listed.includes(created.token_id));
      assert.ok(!listed.includes(created.token.slice(-20)), 'never the secret');
      await runWsops(['scim', 'token', 'revoke', '--workspace', s.ws, created.token_id], env);
      assert.equal((await s.scim('GET', '/Users?count=1', undefined, created.token)).status, 401);
    });

    it('a token given a life works until it ends, then is refused like a revoked one; the CLI and the function refuse a life out of range', async () => {
      s.h.clock.advance(120_000);
      const env = { WSOPS_DATABASE_URL: s.h.databaseUrl, WSOPS_SECRET: TEST_SECRET };
      const made = await createScimToken(s.h.services.database, {
        workspaceId: s.ws,
        environment: 'test',
        locationId: s.locationId,
        days: 1,
        createdBy: 'cli',
        now: s.h.clock(),
      });
      assert.equal(made.expires_at, new Date(s.h.clock() + 86_400_000).toISOString());
      assert.equal(made.status, 'valid');
      assert.equal((await s.scim('GET', '/Users?count=1', undefined, made.token)).status, 200);
      s.h.clock.advance(86_400_000);
      const refused = await s.scim('GET', '/Users?count=1', undefined, made.token);
      assert.equal(refused.status, 401);
      assert.deepEqual(refused.json.schemas, [ERROR]);
      await assert.rejects(
        createScimToken(s.h.services.database, {
          workspaceId: s.ws,
          environment: 'test',
          locationId: s.locationId,
          days: 366,
          createdBy: 'cli',
          now: s.h.clock(),
        }),
        /from 1 to 365/,
      );
      await assert.rejects(
        runWsops(['scim', 'token', 'create', '--workspace', s.ws, '--location', s.locationId, '--days', 'soon'], env),
        /--days must be a whole number of days from 1 to 365/,
      );
      const listed = JSON.parse(await runWsops(['scim', 'token', 'list', '--workspace', s.ws, '--json'], env)) as {
        token_id: string;
        status: string;
      }[];
      assert.equal(listed.find((t) => t.token_id === made.token_id)?.status, 'expired');
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`a SCIM token's request rate [${dialect}]`, () => {
    let s: ScimServer;
    before(async () => {
      s = await startScimServer(dialect, { WSOPS_RATE_LIMIT_PER_SECOND: '2', WSOPS_RATE_LIMIT_BURST: '3' });
    });
    after(async () => s.close());

    it('is held to the per-credential rate of an API key, per token', async () => {
      for (let i = 0; i < 3; i++) assert.equal((await s.scim('GET', '/Users?count=1')).status, 200);
      const limited = await s.scim('GET', '/Users?count=1');
      assert.equal(limited.status, 429);
      assert.deepEqual(limited.json.schemas, [ERROR]);
      assert.ok(Number(limited.headers.get('retry-after')) >= 1);
      const other = await s.newToken(s.ws);
      assert.equal((await s.scim('GET', '/Users?count=1', undefined, other.token)).status, 200, 'another token has its own bucket');
      s.h.clock.advance(1000);
      assert.equal((await s.scim('GET', '/Users?count=1')).status, 200);
    });
  });
}
