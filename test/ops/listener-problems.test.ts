/**
 * Both listeners answer every error as an RFC 9457 problem, also the errors raised outside a
 * route handler (the router, a body parser, the HTTP parser, a missing route): a client reads
 * one error shape whichever listener it talks to, never the framework's own body.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildInternalApp } from '../../src/http/internal-app.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const TOKEN = 'op-listener-problems-0123456789abcdef';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A request over a real socket, with exactly the bytes given (fetch would re-encode a bad URL). */
function send(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The problem every error answers: its status, code, and the request id of the response. */
function assertProblem(answer: Answer, status: number, code: string, what: string): void {
  assert.equal(answer.status, status, `${what}: ${answer.body}`);
  assert.match(String(answer.headers['content-type']), /^application\/problem\+json/, what);
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  assert.equal(body.code, code, what);
  assert.equal(body.status, status, what);
  assert.equal(typeof body.title, 'string', what);
  assert.match(String(body.type), new RegExp(`#${code}$`), what);
  assert.equal(body.request_id, answer.headers['request-id'], `${what}: the body's request_id is the Request-Id header`);
  assert.ok(!('statusCode' in body) && !String(body.code).startsWith('FST_'), `${what}: not the framework's body`);
}

for (const dialect of DIALECTS) {
  describe(`problems from both listeners [${dialect}]`, () => {
    let h: Harness;
    let internal: FastifyInstance;
    let pub: number;
    let int: number;
    let ws: string;
    const auth = { authorization: `Bearer ${TOKEN}` };
    before(async () => {
      h = await createHarness(dialect, { WSOPS_OPERATOR_TOKEN: TOKEN });
      ws = await h.workspace({ seed: false });
      internal = buildInternalApp(h.services);
      await internal.listen({ port: 0, host: '127.0.0.1' });
      await h.app.listen({ port: 0, host: '127.0.0.1' });
      int = (internal.server.address() as AddressInfo).port;
      pub = (h.app.server.address() as AddressInfo).port;
    });
    after(async () => {
      await internal.close();
      await h.close();
    });

    it('an id longer than 200 characters is 414 uri_too_long on both', async () => {
      const long = `per_${'x'.repeat(250)}`;
      assertProblem(await send(pub, 'GET', `/api/v1/people/${long}`), 414, 'uri_too_long', 'public');
      assertProblem(await send(int, 'GET', `/internal/v1/workspaces/${ws}/people/${long}`, auth), 414, 'uri_too_long', 'internal');
      assertProblem(await send(int, 'POST', `/internal/v1/actions/${'a'.repeat(250)}`, auth, '{}'), 414, 'uri_too_long', 'action');
    });

    it('a malformed percent-escape in the path or the query is 400 invalid_request on both', async () => {
      assertProblem(await send(pub, 'GET', '/api/v1/people/per_%ZZ'), 400, 'invalid_request', 'public path');
      assertProblem(await send(pub, 'GET', '/api/v1/people?search=%FF'), 400, 'invalid_request', 'public query');
      assertProblem(await send(int, 'GET', `/internal/v1/workspaces/${ws}/people/per_%ZZ`, auth), 400, 'invalid_request', 'internal path');
      assertProblem(
        await send(int, 'GET', `/internal/v1/workspaces/${ws}/export?registers=%FF`, auth),
        400,
        'invalid_request',
        'internal query',
      );
    });

    it('an unknown route is 404 not_found on both; a path served under other methods, or an unknown method, is 405 with Allow', async () => {
      assertProblem(await send(pub, 'GET', '/nowhere'), 404, 'not_found', 'public');
      assertProblem(await send(int, 'GET', '/nowhere'), 404, 'not_found', 'internal');
      assertProblem(await send(int, 'QUERY', '/nowhere', auth, '{}'), 404, 'not_found', 'internal, unknown method');
      const wrong: [number, string, string, string][] = [
        [pub, 'POST', '/api/v1/people', 'GET, HEAD'],
        [int, 'DELETE', '/healthz', 'GET, HEAD'],
        [int, 'POST', `/internal/v1/workspaces/${ws}/export`, 'GET, HEAD'],
        [int, 'GET', '/internal/v1/actions/asset.return', 'POST'],
        [int, 'POST', `/internal/v1/workspaces/${ws}/people/per_1`, 'GET, HEAD, PUT, PATCH, DELETE'],
        // A method no route declares (Fastify reads a QUERY body: without a Content-Type it was a 400).
        [pub, 'QUERY', '/api/v1/people', 'GET, HEAD'],
        [int, 'QUERY', `/internal/v1/workspaces/${ws}/export`, 'GET, HEAD'],
        [int, 'QUERY', '/internal/v1/actions/asset.return', 'POST'],
      ];
      for (const [port, method, path, allow] of wrong) {
        const answer = await send(port, method, path, auth, method === 'GET' ? undefined : '{}');
        assertProblem(answer, 405, 'method_not_allowed', `${method} ${path}`);
        assert.equal(answer.headers.allow, allow, `${method} ${path}`);
      }
    });

    it('headers over 16 KB are 431 header_fields_too_large on both', async () => {
      const big = { 'x-padding': 'y'.repeat(20_000) };
      assertProblem(await send(pub, 'GET', '/api/v1/people', big), 431, 'header_fields_too_large', 'public');
      assertProblem(await send(int, 'GET', '/healthz', big), 431, 'header_fields_too_large', 'internal');
    });

    it('on the internal listener: a body that is not JSON is 400, of another type 415, too large 413', async () => {
      const record = `/internal/v1/workspaces/${ws}/locations/loc_problem`;
      const json = { ...auth, 'content-type': 'application/json' };
      assertProblem(await send(int, 'PUT', record, json, '{"id":'), 400, 'invalid_request', 'PUT, bad JSON');
      assertProblem(
        await send(int, 'PATCH', record, { ...auth, 'content-type': 'application/merge-patch+json' }, '{'),
        400,
        'invalid_request',
        'PATCH, bad JSON',
      );
      assertProblem(await send(int, 'POST', '/internal/v1/actions/asset.return', json, '[1,'), 400, 'invalid_request', 'action, bad JSON');
      const xml = { ...auth, 'content-type': 'application/xml' };
      assertProblem(await send(int, 'PUT', record, xml, '<a/>'), 415, 'unsupported_media_type', 'PUT, XML');
      assertProblem(await send(int, 'PATCH', record, xml, '<a/>'), 415, 'unsupported_media_type', 'PATCH, XML');
      assertProblem(
        await send(int, 'POST', '/internal/v1/actions/asset.return', xml, '<a/>'),
        415,
        'unsupported_media_type',
        'action, XML',
      );
      assertProblem(
        await send(int, 'POST', `/internal/v1/workspaces/${ws}/import`, json, '{}'),
        415,
        'unsupported_media_type',
        'import, JSON',
      );
      const huge = JSON.stringify({ id: 'loc_problem', name: 'x'.repeat(1_100_000) });
      assertProblem(await send(int, 'PUT', record, json, huge), 413, 'payload_too_large', 'PUT over 1 MB');
      const action = JSON.stringify({ workspace_id: ws, asset: `ast_${'x'.repeat(10)}`, pad: 'x'.repeat(70_000) });
      assertProblem(
        await send(int, 'POST', '/internal/v1/actions/asset.return', json, action),
        413,
        'payload_too_large',
        'action over 64 KB',
      );
    });
  });
}
