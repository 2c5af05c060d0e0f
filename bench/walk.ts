/**
 * A full keyset walk of a list route, the way an integrator's first sync reads it: page after
 * page on one connection, following `next_cursor`. It counts the body bytes as they came over
 * the wire, so it uses undici.request (which does not decode) and decodes br/gzip itself.
 */
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { Agent, request } from 'undici';

export interface Walk {
  cursors: string[];
  seconds: number;
  records: number;
  /** updated_at of the first record of each page. */
  pageStarts: string[];
  /** Response body bytes as sent (compressed when the server compressed), headers not counted. */
  wireBytes: number;
  /** Every Content-Encoding the server answered with ('identity' when it sent none). */
  encodings: Set<string>;
}

function decode(raw: Buffer, encoding: string): Buffer {
  switch (encoding) {
    case 'identity':
      return raw;
    case 'br':
      return brotliDecompressSync(raw);
    case 'gzip':
      return gunzipSync(raw);
    case 'deflate':
      return inflateSync(raw);
    default:
      throw new Error(`walk: the server answered Content-Encoding ${encoding}, which this client did not ask for`);
  }
}

/** How much of a page's start holds its first record's updated_at, and of its end the envelope's tail. */
const HEAD_BYTES = 4096;
const TAIL_BYTES = 2048;

/**
 * One page as a streaming client reads it: the body's chunks as they arrive, without joining
 * them, keeping only the start and the end. Joining an identity page of 1,000 (581 KB) into one
 * buffer cost this client about as much CPU as the server spent on the page (a fresh 581 KB
 * allocation, 12 µs per page fault on the benchmark VM), and the two share 2 cores. A compressed
 * body is joined and decoded: it is 5× smaller, and decoding needs it whole.
 */
async function readPage(
  body: AsyncIterable<Buffer>,
  encoding: string,
): Promise<{ wire: number; head: Buffer; tail: Buffer; whole: () => Buffer; parts: readonly Buffer[] }> {
  const chunks: Buffer[] = [];
  let wire = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    wire += chunk.length;
  }
  if (encoding !== 'identity') {
    const bytes = decode(Buffer.concat(chunks, wire), encoding);
    return { wire, head: bytes.subarray(0, HEAD_BYTES), tail: bytes.subarray(-TAIL_BYTES), whole: () => bytes, parts: [bytes] };
  }
  return {
    wire,
    head: edge(chunks, HEAD_BYTES, 'start'),
    tail: edge(chunks, TAIL_BYTES, 'end'),
    whole: () => Buffer.concat(chunks, wire),
    parts: chunks,
  };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/**
 * The records of the last page (a page with more after it holds `limit`): the objects opened
 * one level inside the envelope's `data` array, found by scanning the bytes (strings skipped),
 * as a streaming client counts them: about 1.3 ms for a page of 1,000 on the benchmark VM. Until
 * issue 9's eighth session the last page was decoded and parsed whole, 2.5–5.4 ms (and its 1,000
 * objects collected after), the only page so read: about a tenth of (d)'s ten-page walk, and a
 * thousandth of the full walk's time.
 */
export function countRecords(parts: readonly Buffer[]): number {
  let depth = 0;
  let inString = false;
  let escaped = false;
  let records = 0;
  for (const part of parts) {
    for (let i = 0; i < part.length; i++) {
      const byte = part[i] as number;
      if (inString) {
        if (escaped) escaped = false;
        else if (byte === BACKSLASH) escaped = true;
        else if (byte === QUOTE) inString = false;
      } else if (byte === QUOTE) inString = true;
      else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
        if (depth === 2 && byte === OPEN_OBJECT) records++;
        depth++;
      } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) depth--;
    }
  }
  return records;
}

/** The first or last `bytes` of a body in chunks, joining only as many chunks as that takes. */
function edge(chunks: readonly Buffer[], bytes: number, side: 'start' | 'end'): Buffer {
  const taken: Buffer[] = [];
  let length = 0;
  for (let i = 0; i < chunks.length && length < bytes; i++) {
    const chunk = chunks[side === 'start' ? i : chunks.length - 1 - i] as Buffer;
    taken.push(chunk);
    length += chunk.length;
  }
  if (side === 'start') return Buffer.concat(taken).subarray(0, bytes);
  return Buffer.concat(taken.reverse()).subarray(-bytes);
}

/**
 * Walks `base` at `limit`; `headers` may carry Accept-Encoding. Without it the request has none
 * (unlike fetch, which always asks for gzip), so the server must answer identity.
 */
export async function walk(base: string, headers: Record<string, string>, limit: number, extra = ''): Promise<Walk> {
  const cursors: string[] = [];
  const pageStarts: string[] = [];
  const encodings = new Set<string>();
  let cursor: string | null = null;
  let records = 0;
  let wireBytes = 0;
  // A connection of its own, closed after: a pooled one left idle past the server's keep-alive
  // (while the bench builds a table, say) would be reused after the server closed it.
  const dispatcher = new Agent({ connections: 1 });
  const started = performance.now();
  do {
    const url = `${base}?limit=${limit}${extra}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res = await request(url, { headers, dispatcher });
    const encoding = String(res.headers['content-encoding'] ?? 'identity').toLowerCase();
    encodings.add(encoding);
    const page = await readPage(res.body, encoding);
    wireBytes += page.wire;
    if (res.statusCode !== 200) throw new Error(`walk: ${res.statusCode} ${page.whole().toString('utf8')}`);
    // Like a streaming client, read only what the walk needs: the envelope's tail and the first
    // record's updated_at. Decoding a whole page of 1,000 into a string cost this client 2–3 ms
    // per page on the benchmark VM, more than the server's time for the page.
    const tail = JSON.parse(`{${page.tail.subarray(page.tail.lastIndexOf('],"has_more":') + 2).toString('utf8')}`) as {
      has_more: boolean;
      next_cursor: string | null;
    };
    records += tail.has_more ? limit : countRecords(page.parts);
    const first = /"updated_at":"([^"]+)"/.exec(page.head.toString('utf8'));
    if (first?.[1]) pageStarts.push(first[1]);
    cursor = tail.next_cursor;
    if (cursor) cursors.push(cursor);
  } while (cursor);
  await dispatcher.close();
  return { cursors, seconds: (performance.now() - started) / 1000, records, pageStarts, wireBytes, encodings };
}

/** Decimal megabytes (10^6 bytes) per million records, the unit issue 9 states the wire cost in: numerically, bytes per record. */
export function mbPerMillion(w: Walk): number {
  return w.wireBytes / w.records;
}
