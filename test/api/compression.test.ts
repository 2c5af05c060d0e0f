/**
 * Content coding of the public listener (issue 9 §1): /api/v1 responses and the static
 * documents are compressed as Accept-Encoding asks (RFC 9110 §12.5.3), say
 * `Vary: Accept-Encoding` everywhere, and a client that asks for nothing gets exactly the
 * uncompressed bytes. Real HTTP on 127.0.0.1 with undici's `request`, which does not decode,
 * so the bytes on the wire are what is checked.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import zlib from 'node:zlib';
import { WsopsClient } from '@wsops/client';
import { request } from 'undici';
import { AVAILABLE_CODINGS, MIN_COMPRESSED_BYTES, negotiateEncoding } from '../../src/http/compression.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

const zstdDecompressSync = (zlib as unknown as { zstdDecompressSync?: (b: Buffer) => Buffer }).zstdDecompressSync;
const NODE_HAS_ZSTD = typeof (zlib as unknown as { zstdCompressSync?: unknown }).zstdCompressSync === 'function';

function decode(coding: string | string[] | undefined, body: Buffer): Buffer {
  if (coding === 'br') return zlib.brotliDecompressSync(body);
  if (coding === 'gzip') return zlib.gunzipSync(body);
  if (coding === 'zstd' && zstdDecompressSync) return zstdDecompressSync(body);
  if (coding === undefined) return body;
  throw new Error(`unexpected Content-Encoding ${String(coding)}`);
}

/** Headers that differ between any two requests (or by design between representations). */
const PER_REQUEST = new Set(['request-id', 'date', 'ratelimit', 'content-length', 'content-encoding', 'etag']);
/** Per-request and per-connection headers (undici closes the connection after a HEAD). */
const TRANSPORT = { 'request-id': 0, date: 0, connection: 0, 'keep-alive': 0 };
const stable = (headers: Raw['headers']) => Object.fromEntries(Object.entries(headers).filter(([name]) => !PER_REQUEST.has(name)));

for (const dialect of DIALECTS) {
  describe(`response compression [${dialect}]`, () => {
    let h: Harness;
    let base: string;
    let key: string;
    let narrowKey: string;
    let assetId: string;
    const LIST = '/api/v1/assets?limit=100';

    async function fetchRaw(path: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' | 'POST' = 'GET'): Promise<Raw> {
      const res = await request(`${base}${path}`, { method, headers });
      return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
    }
    const api = (path: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' | 'POST' = 'GET') =>
      fetchRaw(path, { authorization: `Bearer ${key}`, ...headers }, method);

    before(async () => {
      h = await createHarness(dialect);
      const ws = await h.workspace();
      ({ key } = await h.key(ws));
      ({ key: narrowKey } = await h.key(ws, ['people:read']));
      await h.app.listen({ port: 0, host: '127.0.0.1' });
      const address = h.app.server.address();
      assert.ok(address && typeof address === 'object');
      base = `http://127.0.0.1:${address.port}`;
      assetId = JSON.parse((await api('/api/v1/assets?limit=1')).body.toString()).data[0].id;
    });
    after(() => h.close());

    it('a request without Accept-Encoding gets the uncompressed bytes with exactly the headers of before, plus Vary', async () => {
      const res = await api(LIST);
      assert.equal(res.status, 200);
      assert.ok(res.body.length > 10 * MIN_COMPRESSED_BYTES, 'a page big enough to be worth compressing');
      assert.deepEqual(Object.keys(res.headers).sort(), [
        'cache-control',
        'connection',
        'content-length',
        'content-type',
        'date',
        'keep-alive',
        'ratelimit',
        'ratelimit-policy',
        'request-id',
        'vary',
        'x-content-type-options',
      ]);
      assert.equal(res.headers.vary, 'Accept-Encoding');
      assert.equal(res.headers['content-length'], String(res.body.length));
      const page = JSON.parse(res.body.toString('utf8'));
      assert.equal(page.data.length, 80);
      // The page is the stored documents joined, byte for byte what the handler sent.
      const one = await api(`/api/v1/assets/${page.data[0].id}`);
      assert.ok(res.body.includes(one.body), 'the list holds the exact bytes of the detail document');
    });

    it('Accept-Encoding naming only identity, or empty, gets the same bytes and headers as no Accept-Encoding', async () => {
      const plain = await api(LIST);
      for (const value of ['identity', 'IDENTITY;q=1', '', 'identity, br;q=0, gzip;q=0']) {
        const res = await api(LIST, { 'accept-encoding': value });
        assert.equal(res.headers['content-encoding'], undefined, value);
        assert.deepEqual(res.body, plain.body, value);
        assert.deepEqual(stable(res.headers), stable(plain.headers), value);
        assert.equal(res.headers['content-length'], plain.headers['content-length'], value);
      }
    });

    it('each coding (br, gzip, x-gzip as gzip) decodes to exactly the identity bytes; only Content-Encoding and Content-Length change', async () => {
      const plain = await api(LIST);
      for (const [asked, coding] of [
        ['br', 'br'],
        ['gzip', 'gzip'],
        ['x-gzip', 'gzip'],
        ['GZip', 'gzip'],
      ] as const) {
        const res = await api(LIST, { 'accept-encoding': asked });
        assert.equal(res.status, 200);
        assert.equal(res.headers['content-encoding'], coding, asked);
        assert.equal(res.headers['content-length'], String(res.body.length), `${asked}: Content-Length is the compressed length`);
        assert.ok(res.body.length * 3 < plain.body.length, `${asked}: ${res.body.length} bytes of ${plain.body.length}`);
        assert.deepEqual(decode(coding, res.body), plain.body, asked);
        assert.deepEqual(stable(res.headers), stable(plain.headers), `${asked}: no other header changes`);
      }
    });

    it('the highest q-value wins, ties go to the server preference (br before gzip), `*` stands for codings not named', async () => {
      const cases: [string, string | undefined][] = [
        ['gzip, br', 'br'],
        ['br;q=0.5, gzip;q=0.9', 'gzip'],
        ['br;q=0.9, gzip;q=0.5', 'br'],
        ['gzip;q=0.2', 'gzip'],
        ['*', 'br'],
        ['*;q=0.5, br;q=0.1', 'gzip'],
        ['identity;q=1, br;q=0.5', undefined],
        ['br;q=0.5', 'br'],
        ['deflate, compress', undefined],
      ];
      for (const [value, expected] of cases) {
        const res = await api(LIST, { 'accept-encoding': value });
        assert.equal(res.status, 200, value);
        assert.equal(res.headers['content-encoding'], expected, value);
        assert.equal(JSON.parse(decode(expected, res.body).toString()).data.length, 80, value);
      }
    });

    it('q=0 means not acceptable: `br;q=0` is never brotli, `*;q=0` (and nothing else acceptable) is identity', async () => {
      const cases: [string, string | undefined][] = [
        ['br;q=0, gzip', 'gzip'],
        ['br;q=0.000, *', 'gzip'],
        ['gzip;q=0, br;q=0', undefined],
        ['*;q=0', undefined],
        ['*;q=0, identity;q=0', undefined],
        ['gzip;q=0, x-gzip', undefined],
      ];
      for (const [value, expected] of cases) {
        const res = await api(LIST, { 'accept-encoding': value });
        assert.equal(res.status, 200, value);
        assert.equal(res.headers['content-encoding'], expected, value);
      }
    });

    it('malformed Accept-Encoding members are ignored (the rest still counts), never a 400 or 500', async () => {
      const plain = await api(LIST);
      const cases: [string, string | undefined][] = [
        ['br;q=2', undefined],
        ['br;q=1.5, gzip', 'gzip'],
        ['br;q=abc, gzip;q=0.5', 'gzip'],
        ['br;q=0.1234', undefined],
        ['br; q = 0.5', undefined],
        ['br;level=11, gzip', 'gzip'],
        ['br;q=0.5;q=0.9', undefined],
        ['b r, g(zip)', undefined],
        [';;;,,,;q=1', undefined],
        [',,br,,', 'br'],
        ['\u00e9br', undefined],
        [`${'x'.repeat(8000)}, gzip`, 'gzip'],
        [Array.from({ length: 1000 }, () => 'a;q=0.5').join(','), undefined],
      ];
      for (const [value, expected] of cases) {
        const res = await api(LIST, { 'accept-encoding': value });
        const label = value.slice(0, 40);
        assert.equal(res.status, 200, label);
        assert.equal(res.headers['content-encoding'], expected, label);
        assert.deepEqual(decode(expected, res.body), plain.body, label);
      }
    });

    it('bodies under 1024 bytes go uncompressed even when br is asked (with Vary all the same)', async () => {
      for (const path of ['/api/v1/scopes', `/api/v1/assets/${assetId}`]) {
        const plain = await api(path);
        assert.ok(plain.body.length < MIN_COMPRESSED_BYTES, `${path} is ${plain.body.length} bytes`);
        const res = await api(path, { 'accept-encoding': 'br, gzip' });
        assert.equal(res.status, 200);
        assert.equal(res.headers['content-encoding'], undefined, path);
        assert.equal(res.headers.vary, 'Accept-Encoding', path);
        assert.deepEqual(JSON.parse(res.body.toString()), JSON.parse(plain.body.toString()));
      }
    });

    it('Vary: Accept-Encoding on every /api/v1 response: 200, 400, 401, 403, 404, 405, 414, unknown routes and malformed URLs', async () => {
      const responses: [string, Raw][] = [
        ['200 list', await api(LIST, { 'accept-encoding': 'gzip' })],
        ['200 empty list', await api('/api/v1/assets?search=nothingmatchesthis')],
        ['400', await api('/api/v1/assets?limit=0', { 'accept-encoding': 'br' })],
        ['401', await fetchRaw(LIST, { 'accept-encoding': 'br' })],
        ['403', await fetchRaw(LIST, { authorization: `Bearer ${narrowKey}`, 'accept-encoding': 'br' })],
        ['404 id', await api('/api/v1/assets/ast_doesnotexist')],
        ['404 route', await api('/api/v1/nothing-here', { 'accept-encoding': 'gzip' })],
        ['404 /api/v1', await api('/api/v1')],
        ['405', await api(LIST, { 'accept-encoding': 'br' }, 'POST')],
        ['400 malformed URL', await api('/api/v1/assets/%zz')],
        ['414 long segment', await api(`/api/v1/assets/${'a'.repeat(300)}`)],
      ];
      const statuses = responses.map(([, r]) => r.status);
      assert.deepEqual(statuses, [200, 200, 400, 401, 403, 404, 404, 404, 405, 400, 414]);
      for (const [label, res] of responses) {
        assert.equal(res.headers.vary, 'Accept-Encoding', label);
        const body = decode(res.headers['content-encoding'], res.body);
        assert.equal(res.headers['content-length'], String(res.body.length), label);
        if (res.status >= 400) assert.equal(JSON.parse(body.toString()).status, res.status, `${label}: a problem body`);
      }
    });

    it('HEAD sends the same headers as GET, Content-Length included, for every coding', async () => {
      for (const value of [undefined, 'br', 'gzip']) {
        const headers: Record<string, string> = value ? { 'accept-encoding': value } : {};
        const get = await api(LIST, headers);
        const head = await api(LIST, headers, 'HEAD');
        assert.equal(head.status, 200);
        assert.equal(head.body.length, 0);
        const same = (r: Raw) => ({ ...r.headers, ...TRANSPORT, ratelimit: 0 });
        assert.deepEqual(same(head), same(get), String(value));
      }
    });

    it('zstd where this Node has it; otherwise another acceptable coding or identity, never zstd', async () => {
      assert.equal(AVAILABLE_CODINGS.includes('zstd'), NODE_HAS_ZSTD);
      const only = await api(LIST, { 'accept-encoding': 'zstd' });
      const withGzip = await api(LIST, { 'accept-encoding': 'zstd, gzip;q=0.5' });
      assert.equal(only.status, 200);
      if (NODE_HAS_ZSTD) {
        assert.equal(only.headers['content-encoding'], 'zstd');
        assert.equal(withGzip.headers['content-encoding'], 'zstd');
      } else {
        assert.equal(only.headers['content-encoding'], undefined);
        assert.equal(withGzip.headers['content-encoding'], 'gzip');
      }
      assert.equal(JSON.parse(decode(only.headers['content-encoding'], only.body).toString()).data.length, 80);
    });

    it("the client SDK's fetch asks for gzip by itself (Node's fetch default over http) and reads the compressed pages", async () => {
      const seen: (string | null)[] = [];
      const recording = async (input: string, init: RequestInit) => {
        const res = await fetch(input, init);
        seen.push(res.headers.get('content-encoding'));
        return res;
      };
      const client = new WsopsClient({ apiKey: key, baseUrl: base, fetch: recording });
      const page = await client.assets.listPage({ limit: 100 });
      assert.equal(page.data.length, 80);
      assert.deepEqual(seen, ['gzip']);
    });

    describe('the OpenAPI document', () => {
      const DOC = '/developers/openapi.json';

      it('each coding decodes to exactly the identity document, with Vary and Content-Length', async () => {
        const plain = await fetchRaw(DOC);
        assert.equal(plain.headers.vary, 'Accept-Encoding');
        assert.equal(plain.headers['content-encoding'], undefined);
        for (const coding of ['br', 'gzip']) {
          const res = await fetchRaw(DOC, { 'accept-encoding': coding });
          assert.equal(res.status, 200);
          assert.equal(res.headers['content-encoding'], coding);
          assert.equal(res.headers.vary, 'Accept-Encoding');
          assert.equal(res.headers['content-type'], plain.headers['content-type']);
          assert.equal(res.headers['content-length'], String(res.body.length));
          assert.ok(res.body.length * 8 < plain.body.length, `${coding}: ${res.body.length} of ${plain.body.length} bytes`);
          assert.deepEqual(decode(coding, res.body), plain.body, coding);
        }
      });

      it('each representation has its own ETag; If-None-Match with the matching one answers 304 with Vary, another one 200', async () => {
        const tags = new Map<string | undefined, string>();
        for (const coding of [undefined, 'br', 'gzip']) {
          const res = await fetchRaw(DOC, coding ? { 'accept-encoding': coding } : {});
          tags.set(coding, res.headers.etag as string);
        }
        const identity = tags.get(undefined) as string;
        assert.match(identity, /^"[A-Za-z0-9_-]{27}"$/);
        assert.equal(tags.get('br'), `${identity.slice(0, -1)}-br"`);
        assert.equal(tags.get('gzip'), `${identity.slice(0, -1)}-gzip"`);

        const fresh = await fetchRaw(DOC, { 'accept-encoding': 'br', 'if-none-match': tags.get('br') as string });
        assert.equal(fresh.status, 304);
        assert.equal(fresh.body.length, 0);
        assert.equal(fresh.headers.vary, 'Accept-Encoding');
        assert.equal(fresh.headers.etag, tags.get('br'));

        const weak = await fetchRaw(DOC, { 'accept-encoding': 'gzip', 'if-none-match': `"x", W/${tags.get('gzip')}` });
        assert.equal(weak.status, 304);

        // A cache holding the identity bytes, now asking for br, must get the br bytes.
        const other = await fetchRaw(DOC, { 'accept-encoding': 'br', 'if-none-match': identity });
        assert.equal(other.status, 200);
        assert.equal(other.headers['content-encoding'], 'br');
        assert.equal(other.headers.etag, tags.get('br'));

        const plain304 = await fetchRaw(DOC, { 'if-none-match': identity });
        assert.equal(plain304.status, 304);
        assert.equal(plain304.headers.vary, 'Accept-Encoding');
      });

      it('HEAD sends the same headers as GET', async () => {
        for (const coding of [undefined, 'br']) {
          const headers: Record<string, string> = coding ? { 'accept-encoding': coding } : {};
          const get = await fetchRaw(DOC, headers);
          const head = await fetchRaw(DOC, headers, 'HEAD');
          assert.deepEqual({ ...head.headers, ...TRANSPORT }, { ...get.headers, ...TRANSPORT }, String(coding));
        }
      });
    });

    it('the Scalar bundle is served compressed once per coding, with its CSP, cache policy and an ETag per representation', async () => {
      const path = '/developers/assets/scalar-standalone.js';
      const plain = await fetchRaw(path);
      const br = await fetchRaw(path, { 'accept-encoding': 'br' });
      assert.equal(br.headers['content-encoding'], 'br');
      assert.equal(br.headers['cache-control'], 'public, max-age=3600');
      assert.equal(br.headers['content-security-policy'], plain.headers['content-security-policy']);
      assert.equal(br.headers.vary, 'Accept-Encoding');
      assert.equal(br.headers.etag, `${(plain.headers.etag as string).slice(0, -1)}-br"`);
      assert.ok(br.body.length * 3 < plain.body.length, `${br.body.length} of ${plain.body.length} bytes`);
      assert.deepEqual(zlib.brotliDecompressSync(br.body), plain.body);
      const again = await fetchRaw(path, { 'accept-encoding': 'br' });
      assert.deepEqual(again.body, br.body, 'the same bytes: compressed once and kept');
    });
  });
}

describe('Accept-Encoding negotiation (RFC 9110 §12.5.3)', () => {
  const available = ['br', 'zstd', 'gzip'] as const;
  const cases: [string | undefined, string][] = [
    [undefined, 'identity'],
    ['', 'identity'],
    ['identity', 'identity'],
    ['zstd, gzip', 'zstd'],
    ['gzip;Q=0.8, zstd;q=0.7', 'gzip'],
    ['*;q=0.3, identity;q=0.4', 'identity'],
    ['*;q=0.3, identity;q=0.3', 'br'],
    ['gzip;q=1.000', 'gzip'],
    ['gzip;q=1.001', 'identity'],
    ['gzip;q=0.', 'identity'],
    ['gzip;q=.5', 'identity'],
    ['gzip ; q=0.5', 'gzip'],
  ];
  for (const [header, expected] of cases) {
    it(`${JSON.stringify(header)} → ${expected}`, () => assert.equal(negotiateEncoding(header, available), expected));
  }

  it('a coding the server lacks is never chosen, whatever its weight', () => {
    assert.equal(negotiateEncoding('zstd;q=1, gzip;q=0.1', ['br', 'gzip']), 'gzip');
    assert.equal(negotiateEncoding('zstd', ['br', 'gzip']), 'identity');
  });
});
