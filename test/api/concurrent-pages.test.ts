/**
 * Concurrent list pages over real HTTP: each response is its own page's bytes, whatever else is
 * in flight, however it is encoded, and when a client pipelines more pages than the socket
 * buffers hold. (Until ADR 25 pages were read on worker threads and came back in shared memory
 * slots; these tests were written against that and still hold on the event loop.)
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Agent, request } from 'undici';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

/** `count` HTTP/1.1 responses with Content-Length, read off a raw socket in order: their bodies. */
async function readResponses(socket: Socket, count: number): Promise<string[]> {
  const bodies: string[] = [];
  let buffered = Buffer.alloc(0);
  socket.resume();
  for await (const chunk of socket) {
    buffered = Buffer.concat([buffered, chunk as Buffer]);
    for (;;) {
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) break;
      const length = Number(/content-length: (\d+)/i.exec(buffered.subarray(0, end).toString('latin1'))?.[1]);
      if (buffered.length < end + 4 + length) break;
      bodies.push(buffered.subarray(end + 4, end + 4 + length).toString('utf8'));
      buffered = buffered.subarray(end + 4 + length);
    }
    if (bodies.length >= count) break;
  }
  return bodies;
}

function decoded(res: { headers: Record<string, unknown>; rawPayload: Buffer }): string {
  const coding = res.headers['content-encoding'];
  if (coding === 'br') return brotliDecompressSync(res.rawPayload).toString('utf8');
  if (coding === 'gzip') return gunzipSync(res.rawPayload).toString('utf8');
  return res.rawPayload.toString('utf8');
}

for (const dialect of DIALECTS) {
  describe(`concurrent pages [${dialect}]`, () => {
    let h: Harness;
    let key: string;
    let urls: string[];
    const raw = (url: string) => h.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });

    before(async () => {
      h = await createHarness(dialect);
      const workspace = await h.workspace();
      ({ key } = await h.key(workspace));
      const first = (await h.get('/api/v1/assets?limit=5', key)).json as { next_cursor: string; data: { updated_at: string }[] };
      const since = encodeURIComponent(first.data[2]?.updated_at as string);
      urls = [
        '/api/v1/assets?limit=1',
        '/api/v1/assets?limit=100',
        '/api/v1/assets?limit=1000',
        `/api/v1/assets?limit=5&cursor=${encodeURIComponent(first.next_cursor)}`,
        '/api/v1/assets?status=AVAILABLE&limit=20',
        `/api/v1/assets?updated_since=${since}&limit=50`,
        '/api/v1/people?search=a&limit=30',
        '/api/v1/vendors?limit=1000',
        '/api/v1/locations?limit=2',
      ];
    });
    after(() => h.close());

    it('hundreds of concurrent pages, identity, br and gzip, are each their own bytes, aborted requests and a pipelining client included', async () => {
      const paths = urls.filter((u) => !u.includes('limit=1000'));
      const coded = paths.flatMap((u) => [undefined, 'br', 'gzip'].map((coding) => ({ u, coding })));
      const expected = new Map<string, string>();
      for (const u of paths) expected.set(u, (await raw(u)).body);
      await h.app.listen({ port: 0, host: '127.0.0.1' });
      const address = h.app.server.address();
      assert.ok(address && typeof address === 'object');
      const dispatcher = new Agent({ connections: 50 });
      try {
        const get = async (u: string, coding: string | undefined, signal?: AbortSignal) => {
          const headers: Record<string, string> = { authorization: `Bearer ${key}`, ...(coding ? { 'accept-encoding': coding } : {}) };
          const res = await request(`http://127.0.0.1:${address.port}${u}`, { headers, dispatcher, signal });
          const rawPayload = Buffer.from(await res.body.arrayBuffer());
          return { statusCode: res.statusCode, headers: res.headers as Record<string, unknown>, rawPayload };
        };
        const answers = await Promise.all(
          Array.from({ length: 256 }, (_, i) => coded[i % coded.length] as { u: string; coding?: string }).map(async ({ u, coding }) => ({
            u,
            coding,
            res: await get(u, coding),
          })),
        );
        for (const { u, coding, res } of answers) {
          assert.equal(res.statusCode, 200, u);
          assert.equal(decoded(res), expected.get(u), `${u} with ${coding ?? 'no'} Accept-Encoding: never another page's bytes`);
          const large = Buffer.byteLength(expected.get(u) as string) >= 1024;
          assert.equal(
            res.headers['content-encoding'],
            coding && large ? coding : undefined,
            `${u}: compressed when asked and 1 KB or more`,
          );
        }
        // Clients that give up mid-request, some before their page is read, some while it is sent.
        const aborted = Array.from({ length: 100 }, (_, i) => {
          const controller = new AbortController();
          const { u, coding } = coded[i % coded.length] as { u: string; coding?: string };
          const done = get(u, coding, controller.signal).catch(() => undefined);
          setTimeout(() => controller.abort(), i % 5);
          return done;
        });
        await Promise.all(aborted);

        // A client that pipelines more pages than the kernel's socket buffers hold and reads
        // none yet, while other clients' pages go on being served.
        const pipelined = paths.filter((u) => (expected.get(u)?.length ?? 0) > 20_000);
        assert.ok(pipelined.length >= 1, 'pages large enough to fill the socket buffers');
        const asked = Array.from({ length: 300 }, (_, i) => pipelined[i % pipelined.length] as string);
        const socket = connect(address.port, '127.0.0.1');
        socket.pause();
        await new Promise((resolve) => socket.once('connect', resolve));
        socket.write(asked.map((u) => `GET ${u} HTTP/1.1\r\nHost: wsops\r\nAuthorization: Bearer ${key}\r\n\r\n`).join(''));
        const churn = await Promise.all(Array.from({ length: 128 }, (_, i) => get(paths[i % paths.length] as string, undefined)));
        for (const [i, res] of churn.entries())
          assert.equal(res.rawPayload.toString('utf8'), expected.get(paths[i % paths.length] as string));
        const bodies = await readResponses(socket, asked.length);
        socket.destroy();
        for (const [i, body] of bodies.entries())
          assert.equal(body, expected.get(asked[i] as string), `pipelined page ${i}: its own bytes`);
      } finally {
        await dispatcher.close();
      }
    });
  });
}
