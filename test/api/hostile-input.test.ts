/**
 * Hostile input is refused by its exact shape before it reaches a database, with the same
 * problem format everywhere: ids with NUL bytes, instants outside 0001..9999 once the offset
 * is applied, cursors issued "in the future" or with junk after the MAC, and the errors that
 * Fastify and Node's HTTP parser raise themselves (bad URL, 414, 431, malformed request).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { buildInternalApp } from '../../src/http/internal-app.js';
import { REGISTERS } from '../../src/registers/catalogue.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const OPERATOR_TOKEN = 'operator-token-operator-token-0123456789';
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

function assertProblem(res: { status: number; headers: Record<string, unknown>; body: string }, status: number, code: string) {
  assert.equal(res.status, status, res.body.slice(0, 300));
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
  const p = JSON.parse(res.body);
  assert.equal(p.status, status);
  assert.equal(p.code, code);
  assert.match(p.type, new RegExp(`^https?://[^/#]+/developers/errors#${code}$`), 'the type resolves to the error catalogue page');
  assert.ok(p.title && p.detail);
  assert.match(p.request_id, /^req_/);
  assert.equal(res.headers['request-id'], p.request_id, 'Request-Id header matches the body');
  return p;
}

/** Sends raw bytes to a listening server and reads the answer until the server closes. */
function rawExchange(port: number, bytes: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      data += d;
    });
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer within 5 s')));
    socket.on('close', () => {
      const [head = '', body = ''] = data.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`hostile input [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    let key: string;
    before(async () => {
      h = await createHarness(dialect, { WSOPS_OPERATOR_TOKEN: OPERATOR_TOKEN });
      ws = await h.workspace();
      ({ key } = await h.key(ws));
    });
    after(() => h.close());

    describe('ids are checked by their exact shape before any query', () => {
      for (const register of REGISTERS) {
        it(`GET /api/v1/${register.path}/<id with NUL, too long, or foreign characters> is 404 not_found, never a 5xx`, async () => {
          const p = register.idPrefix;
          for (const id of [`${p}_%00`, `${p}_a%00b`, `${p}_${'a'.repeat(41)}`, `${p}_a-b`, `${p}_%C3%A9`, `${p}_a%20b`, `${p}_`]) {
            const res = await h.get(`/api/v1/${register.path}/${id}`, key);
            assertProblem(res, 404, 'not_found');
          }
        });
      }

      it('the internal API refuses a workspace_id that is not wsp_ followed by letters and digits (NUL included) with 400, never a 5xx', async (t) => {
        const internal = buildInternalApp(h.services);
        t.after(() => internal.close());
        for (const workspaceId of ['wsp_\u0000', `${ws}\u0000`, 'wsp_\ud800', 'x'.repeat(50), `${ws} `]) {
          const res = await internal.inject({
            method: 'POST',
            url: '/internal/v1/actions/asset.return',
            headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
            payload: JSON.stringify({ workspace_id: workspaceId, asset: 'ast_x' }),
          });
          const p = assertProblem({ status: res.statusCode, headers: res.headers, body: res.body }, 400, 'invalid_parameter');
          assert.equal(p.param, 'workspace_id');
        }
        const res = await internal.inject({
          method: 'POST',
          url: '/internal/v1/actions/asset.return',
          headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ workspace_id: ws, asset: 'ast_\u0000' }),
        });
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(JSON.parse(res.body).param, 'asset');
      });
    });

    describe('updated_since is bounded as an instant: 0001-01-01 to 9999-12-31 UTC, after the offset', () => {
      for (const since of [
        '9999-12-31T23:00:00-02:00',
        '9999-12-31T23:59:59.999-00:01',
        '0001-01-01T00:30:00+01:00',
        '0000-06-01T00:00:00Z',
      ]) {
        it(`updated_since=${since} is 400 invalid_parameter (outside the range), not every record`, async () => {
          const res = await h.get(`/api/v1/assets?updated_since=${encodeURIComponent(since)}`, key);
          const p = assertProblem(res, 400, 'invalid_parameter');
          assert.equal(p.param, 'updated_since');
        });
      }

      it('the last instant of 9999 returns nothing; the first of 0001 and two-digit years return every record', async () => {
        const all = (await h.get('/api/v1/assets?limit=1000', key)).json.data.length;
        assert.ok(all > 0);
        const late = await h.get(`/api/v1/assets?updated_since=${encodeURIComponent('9999-12-31T21:59:59.999-02:00')}`, key);
        assert.equal(late.status, 200);
        assert.deepEqual(late.json.data, []);
        for (const since of ['0001-01-01T00:00:00Z', '0050-03-01T00:00:00Z', '1969-12-31T23:59:59Z']) {
          const early = await h.get(`/api/v1/assets?limit=1000&updated_since=${since}`, key);
          assert.equal(early.status, 200, since);
          assert.equal(early.json.data.length, all, since);
        }
      });
    });

    describe('cursors', () => {
      const firstCursor = async () => (await h.get('/api/v1/assets?limit=1', key)).json.next_cursor as string;

      it('a cursor issued more than a minute "in the future" is invalid_cursor; one within the skew is accepted', async () => {
        h.clock.advance(2 * 3600_000);
        const future = await firstCursor();
        h.clock.advance(-2 * 3600_000);
        const res = await h.get(`/api/v1/assets?limit=1&cursor=${encodeURIComponent(future)}`, key);
        assert.equal(assertProblem(res, 400, 'invalid_cursor').param, 'cursor');
        // And it stays refused: it does not become a cursor that never expires.
        h.clock.advance(30 * 3600_000);
        const later = await h.get(`/api/v1/assets?limit=1&cursor=${encodeURIComponent(future)}`, key);
        h.clock.advance(-30 * 3600_000);
        assert.equal(later.status, 400);
        h.clock.advance(30_000);
        const skewed = await firstCursor();
        h.clock.advance(-30_000);
        assert.equal((await h.get(`/api/v1/assets?limit=1&cursor=${encodeURIComponent(skewed)}`, key)).status, 200);
      });

      it('junk after the MAC, or a MAC differing only in its spare bits, is invalid_cursor', async () => {
        const cursor = await firstCursor();
        assert.equal((await h.get(`/api/v1/assets?limit=1&cursor=${encodeURIComponent(cursor)}`, key)).status, 200);
        const last = cursor.at(-1) as string;
        const spare = BASE64URL[BASE64URL.indexOf(last) ^ 1] as string;
        assert.deepEqual(
          Buffer.from(cursor.split('.')[1] as string, 'base64url'),
          Buffer.from(`${cursor.slice(cursor.indexOf('.') + 1, -1)}${spare}`, 'base64url'),
          'the edit decodes to the same bytes',
        );
        for (const edited of [`${cursor}==`, `${cursor}!!`, `${cursor}=`, `${cursor} `, `${cursor.slice(0, -1)}${spare}`, `.${cursor}`]) {
          const res = await h.get(`/api/v1/assets?limit=1&cursor=${encodeURIComponent(edited)}`, key);
          assert.equal(assertProblem(res, 400, 'invalid_cursor').param, 'cursor', edited);
        }
      });
    });

    describe("Fastify's and Node's own errors are problems with a Request-Id", () => {
      it('a malformed percent-escape in the URL is 400 invalid_request', async () => {
        for (const url of ['/api/v1/assets/%E0%A4%A', '/api/v1/%zz', '/api/v1/assets/ast_%ED%A0%80']) {
          const res = await h.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
          assertProblem({ status: res.statusCode, headers: res.headers, body: res.body }, 400, 'invalid_request');
        }
      });

      it('an over-long path segment is 414 uri_too_long', async () => {
        const res = await h.app.inject({ method: 'GET', url: `/api/v1/assets/ast_${'a'.repeat(300)}` });
        assertProblem({ status: res.statusCode, headers: res.headers, body: res.body }, 414, 'uri_too_long');
      });

      it('over-large headers (431), an over-long URL (431) and a malformed request (400) on a real socket', async () => {
        await h.app.listen({ port: 0, host: '127.0.0.1' });
        try {
          const port = (h.app.server.address() as net.AddressInfo).port;
          const big = await rawExchange(port, `GET /api/v1/assets HTTP/1.1\r\nHost: t\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
          assertProblem(big, 431, 'header_fields_too_large');
          const longUrl = await rawExchange(port, `GET /api/v1/assets?search=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: t\r\n\r\n`);
          assertProblem(longUrl, 431, 'header_fields_too_large');
          const malformed = await rawExchange(port, 'GET /api/v1/assets HTTP/1.1\r\nHost: t\r\nBad Header\r\n\r\n');
          assertProblem(malformed, 400, 'invalid_request');
        } finally {
          await h.app.close();
        }
      });
    });
  });
}
