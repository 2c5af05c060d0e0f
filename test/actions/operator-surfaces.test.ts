/**
 * The two ways an operator runs domain actions: `wsops act` (a real process) and the internal
 * HTTP API `POST /internal/v1/actions/:action` on the internal listener (operator token,
 * constant-time comparison, refused entirely while no token is configured, RFC 9457 problems,
 * not in the OpenAPI document). Its listener, throttling and metrics: test/ops/.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { operatorTokenMatches } from '../../src/guards/operator-token.js';
import { buildInternalApp } from '../../src/http/internal-app.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness, TEST_SECRET } from '../helpers/harness.js';
import { Fixtures } from './helpers.js';

const BIN = new URL('../../bin/wsops', import.meta.url).pathname;
const TOKEN = 'op-token-0123456789abcdef-0123456789abcdef';

for (const dialect of DIALECTS) {
  describe(`operator surfaces of the domain actions [${dialect}]`, () => {
    let h: Harness;
    let internal: FastifyInstance;
    before(async () => {
      h = await createHarness(dialect, { WSOPS_OPERATOR_TOKEN: TOKEN });
      internal = buildInternalApp(h.services);
      await internal.ready();
    });
    after(async () => {
      await internal.close();
      await h.close();
    });

    const post = (action: string, body: unknown, token: string | null = TOKEN, headers: Record<string, string> = {}) =>
      internal.inject({
        method: 'POST',
        url: `/internal/v1/actions/${action}`,
        headers: { 'content-type': 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...headers },
        payload: typeof body === 'string' ? body : JSON.stringify(body),
      });

    function assertProblem(res: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, code: string) {
      assert.equal(res.statusCode, status, res.body);
      assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
      const p = JSON.parse(res.body);
      assert.equal(p.status, status);
      assert.equal(p.code, code);
      assert.equal(p.type, `${h.services.config.baseUrl}/developers/errors#${code}`);
      assert.equal(typeof p.title, 'string');
      assert.equal(typeof p.detail, 'string');
      assert.equal(p.request_id, res.headers['request-id']);
      return p;
    }

    it('POST /internal/v1/actions/:action runs the action with the operator token and answers 200 {records, events}; the audit names the operator', async () => {
      const fx = await Fixtures.create(h);
      const person = await fx.activePerson();
      const asset = await fx.first('assets', (a) => a.status === 'AVAILABLE');
      const expected = new Date(h.clock() + 7 * 86_400_000).toISOString();
      const res = await post('asset.assign', { workspace_id: fx.ws, asset: asset.id, person: person.id, expected_return: expected });
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      const body = JSON.parse(res.body);
      assert.deepEqual(Object.keys(body), ['records', 'events']);
      assert.deepEqual(body.records[0], await fx.api('assets', asset.id));
      assert.equal(body.records[0].expected_return_at, expected);
      const events = await fx.events();
      assert.deepEqual(
        body.events,
        events.map((e) => e.id),
      );
      assert.equal(events[0]?.type, 'asset.assigned');
      assert.deepEqual(await fx.audit(), [{ actor: 'operator', action: 'action.asset.assign', target: asset.id }]);

      const lrn = await fx.first('learning-assignments', (a) => a.status === 'ASSIGNED' && a.content_kind === 'COURSE');
      const passed = await post('learning.acknowledge', { workspace_id: fx.ws, assignment: lrn.id, method: 'passed', score: 75 });
      assert.equal(passed.statusCode, 200, passed.body);
      assert.equal(JSON.parse(passed.body).records[0].score, 75);
    });

    it('the internal API refuses a missing or wrong operator token with 401 before reading the body, and changes nothing', async () => {
      const fx = await Fixtures.create(h);
      const asset = await fx.first('assets', (a) => a.status === 'ASSIGNED');
      const before = await fx.snapshot();
      for (const [token, headers] of [
        [null, {}],
        ['wrong', {}],
        [`${TOKEN}x`, {}],
        [TOKEN.slice(0, -1), {}],
        [null, { authorization: `Basic ${TOKEN}` }],
        [null, { authorization: TOKEN }],
      ] as const) {
        const res = await post('asset.return', { workspace_id: fx.ws, asset: asset.id }, token, headers);
        const p = assertProblem(res, 401, 'unauthorized');
        assert.match(String(res.headers['www-authenticate']), /^Bearer/);
        assert.match(p.detail, /WSOPS_OPERATOR_TOKEN/);
      }
      assertProblem(await post('asset.return', '{not json', 'wrong'), 401, 'unauthorized');
      assert.equal(await fx.snapshot(), before);
    });

    it('the operator token comparison hashes both sides, so tokens of any length compare in constant time', () => {
      assert.equal(operatorTokenMatches(TOKEN, TOKEN), true);
      assert.equal(operatorTokenMatches('', TOKEN), false);
      assert.equal(operatorTokenMatches(`${TOKEN}${TOKEN}`, TOKEN), false);
    });

    it('the internal API validates its body strictly: unknown fields, a missing workspace_id, malformed values and a non-object body are 400 problems', async () => {
      const fx = await Fixtures.create(h);
      const asset = await fx.first('assets', (a) => a.status === 'ASSIGNED');
      const before = await fx.snapshot();
      let p = assertProblem(await post('asset.return', { workspace_id: fx.ws, asset: asset.id, force: true }), 400, 'unknown_parameter');
      assert.equal(p.param, 'force');
      assert.match(p.detail, /unknown argument "force"; this action takes: asset/);
      p = assertProblem(await post('asset.return', { asset: asset.id }), 400, 'invalid_parameter');
      assert.equal(p.param, 'workspace_id');
      p = assertProblem(await post('asset.return', { workspace_id: fx.ws, asset: 42 }), 400, 'invalid_parameter');
      assert.equal(p.param, 'asset');
      p = assertProblem(await post('asset.return', { workspace_id: fx.ws }), 400, 'invalid_parameter');
      assert.match(p.detail, /^asset is required/);
      p = assertProblem(
        await post('asset.assign', { workspace_id: fx.ws, asset: asset.id, person: 'per_x', expected_return: 'soon' }),
        400,
        'invalid_parameter',
      );
      assert.equal(p.param, 'expected_return');
      assertProblem(await post('asset.return', [fx.ws]), 400, 'invalid_request');
      assert.equal((await post('asset.return', '{not json')).statusCode, 400);
      assert.equal(await fx.snapshot(), before);
    });

    it('the internal API answers 404 for an unknown action or workspace and 409 invalid_state for an action that does not fit the state', async () => {
      const fx = await Fixtures.create(h);
      const asset = await fx.first('assets', (a) => a.status === 'AVAILABLE');
      const before = await fx.snapshot();
      let p = assertProblem(await post('asset.steal', { workspace_id: fx.ws, asset: asset.id }), 404, 'not_found');
      assert.match(p.detail, /unknown action "asset.steal"; actions are: asset.assign, asset.return/);
      p = assertProblem(await post('asset.return', { workspace_id: 'wsp_nowhere', asset: asset.id }), 404, 'not_found');
      assert.match(p.detail, /no workspace wsp_nowhere/);
      p = assertProblem(await post('asset.return', { workspace_id: fx.ws, asset: asset.id }), 409, 'invalid_state');
      assert.match(p.detail, /is AVAILABLE; only an ASSIGNED asset can be returned/);
      assert.equal(p.title, 'Action does not fit the record state');
      assert.equal(await fx.snapshot(), before);
    });

    it('the internal API is not in the OpenAPI document', async () => {
      const res = await h.app.inject({ method: 'GET', url: '/developers/openapi.json' });
      const doc = JSON.parse(res.body);
      assert.ok(Object.keys(doc.paths).length > 0);
      assert.deepEqual(
        Object.keys(doc.paths).filter((p) => p.includes('internal')),
        [],
      );
      assert.ok(!res.body.includes('/internal/'));
    });

    it('wsops act runs an action in a real process: --json prints {records, events}; a refused state prints one line and exits 2', async () => {
      const fx = await Fixtures.create(h);
      const person = await fx.activePerson();
      const asset = await fx.first('assets', (a) => a.status === 'AVAILABLE');
      const run = (...args: string[]) => {
        const r = spawnSync(process.execPath, [BIN, ...args], {
          env: { ...process.env, WSOPS_DATABASE_URL: h.databaseUrl, WSOPS_SECRET: TEST_SECRET, WSOPS_LOG_LEVEL: 'silent' },
          encoding: 'utf8',
        });
        return { status: r.status, stdout: r.stdout, stderr: r.stderr };
      };
      const expected = '2099-01-01T00:00:00.000Z';
      const ok = run(
        'act',
        'asset.assign',
        '--workspace',
        fx.ws,
        '--asset',
        asset.id,
        '--person',
        person.id,
        '--expected-return',
        expected,
        '--json',
      );
      assert.equal(ok.status, 0, ok.stderr);
      const out = JSON.parse(ok.stdout);
      assert.deepEqual(Object.keys(out), ['records', 'events']);
      assert.deepEqual(out.records[0], await fx.api('assets', asset.id));
      assert.equal(out.records[0].status, 'ASSIGNED');
      assert.equal(out.records[0].expected_return_at, expected);
      const events = await fx.events();
      assert.deepEqual(out.events, [events[0]?.id]);
      assert.equal(events[0]?.type, 'asset.assigned');
      assert.deepEqual(await fx.audit(), [{ actor: 'cli', action: 'action.asset.assign', target: asset.id }]);

      const snapshot = await fx.snapshot();
      for (const [args, pattern] of [
        [
          ['act', 'asset.assign', '--workspace', fx.ws, '--asset', asset.id, '--person', person.id],
          /is ASSIGNED to per_\w+; only an AVAILABLE asset/,
        ],
        [['act', 'asset.launch', '--workspace', fx.ws, '--asset', asset.id], /unknown action "asset.launch"; actions are:/],
        [
          ['act', 'asset.return', '--workspace', fx.ws, '--asset', asset.id, '--person', person.id],
          /unknown argument "--person"; this action takes: --asset/,
        ],
        [['act', 'asset.return', '--workspace', fx.ws], /--asset is required/],
        [
          ['act', 'purchase_request.decide', '--workspace', fx.ws, '--request', 'prq_x', '--decision', 'maybe'],
          /--decision must be one of/,
        ],
      ] as const) {
        const r = run(...args);
        assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, pattern);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
        assert.equal(r.stdout, '');
      }
      assert.equal(await fx.snapshot(), snapshot, 'refused commands change nothing');

      const human = run('act', 'asset.return', '--workspace', fx.ws, '--asset', asset.id);
      assert.equal(human.status, 0, human.stderr);
      assert.match(human.stdout, /^asset\.return: wrote 1 record\(s\), emitted 1 event\(s\)/);
      assert.deepEqual(
        (await fx.events()).map((e) => e.type),
        ['asset.assigned', 'asset.returned'],
      );
    });
  });

  describe(`internal API without WSOPS_OPERATOR_TOKEN [${dialect}]`, () => {
    let h: Harness;
    let internal: FastifyInstance;
    before(async () => {
      h = await createHarness(dialect);
      internal = buildInternalApp(h.services);
      await internal.ready();
    });
    after(async () => {
      await internal.close();
      await h.close();
    });

    it('while WSOPS_OPERATOR_TOKEN is unset the internal API refuses every request with 403 forbidden, whatever token is sent', async () => {
      const fx = await Fixtures.create(h);
      const asset = await fx.first('assets', (a) => a.status === 'ASSIGNED');
      const before = await fx.snapshot();
      for (const authorization of [undefined, 'Bearer ', `Bearer ${TOKEN}`, 'Bearer undefined']) {
        const res = await internal.inject({
          method: 'POST',
          url: '/internal/v1/actions/asset.return',
          headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
          payload: JSON.stringify({ workspace_id: fx.ws, asset: asset.id }),
        });
        assert.equal(res.statusCode, 403, res.body);
        const p = JSON.parse(res.body);
        assert.equal(p.code, 'forbidden');
        assert.match(p.detail, /disabled until WSOPS_OPERATOR_TOKEN is set/);
      }
      assert.equal(await fx.snapshot(), before);
    });
  });
}
