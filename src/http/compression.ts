/**
 * Compression of responses (ADR 13): which content coding a response gets (`negotiateEncoding`,
 * on `Accept-Encoding`), how each coding is made (`compressResponse` per response,
 * `compressStatic` once for a static document), and the onSend hook that compresses /api/v1
 * responses (`compressResponses`).
 */
import zlib from 'node:zlib';
import type { FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';

// Content negotiation on `Accept-Encoding` (RFC 9110 §12.5.3): which content coding a
// response gets. A pure function of the header and the codings this server has, so every route
// that compresses decides alike.

/** A coding name is an HTTP token; anything else in a member makes the member malformed. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
/** weight = OWS ";" OWS "q=" qvalue, qvalue 0–1 with at most three decimals ("q" in any case). */
const WEIGHT = /^q=(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/i;

/**
 * Each named coding with its weight. A malformed member (bad token, a weight out of range or
 * of the wrong form, any parameter other than `q`) is ignored, never an error. `x-gzip` is
 * gzip (§8.4.1.3). A coding named twice keeps its lower weight: what any member refuses is
 * not sent.
 */
export function acceptedWeights(header: string): Map<string, number> {
  const weights = new Map<string, number>();
  for (const member of header.split(',')) {
    const parts = member.split(';');
    const name = (parts[0] as string).trim().toLowerCase();
    if (name === '' || parts.length > 2 || !TOKEN.test(name)) continue;
    let weight = 1;
    if (parts.length === 2) {
      const m = WEIGHT.exec((parts[1] as string).trim());
      if (!m) continue;
      weight = Number(m[1]);
    }
    const coding = name === 'x-gzip' ? 'gzip' : name;
    weights.set(coding, Math.min(weights.get(coding) ?? 1, weight));
  }
  return weights;
}

/**
 * The coding to answer with: the available one of highest weight, ties going to the order of
 * `available` (the server's preference), or `identity`.
 *
 * - No header, an empty one or one naming only `identity` asks for nothing: `identity`.
 * - A coding not named takes the weight of `*`, or is not acceptable; weight 0 means "not
 *   acceptable".
 * - `identity` that is not named ranks below every acceptable coding (a client that lists
 *   `br;q=0.5` wants br rather than nothing), and wins over a coding only by a higher weight.
 * - When nothing is acceptable, not even `identity` (`*;q=0`), the answer is still identity:
 *   a read API is better answered than refused with 406.
 */
export function negotiateEncoding<C extends string>(header: string | string[] | undefined, available: readonly C[]): C | 'identity' {
  if (header === undefined) return 'identity';
  const weights = acceptedWeights(Array.isArray(header) ? header.join(',') : header);
  if (weights.size === 0) return 'identity';
  const star = weights.get('*');
  let best: C | 'identity' = 'identity';
  let bestWeight = 0;
  for (const coding of available) {
    const weight = weights.get(coding) ?? star ?? 0;
    if (weight > bestWeight) {
      best = coding;
      bestWeight = weight;
    }
  }
  const identity = weights.get('identity') ?? star;
  return identity !== undefined && identity > bestWeight ? 'identity' : best;
}

// The content codings this server can send, in its order of preference, and how each is made.
// Levels were chosen by measurement (ADR 13; docs/benchmarks-history.md, "Compression levels"): per
// response the fastest level that still cuts a page about fivefold; for a static document,
// compressed once, the smallest output whose one-time cost stays under about half a second.

export type Coding = 'br' | 'zstd' | 'gzip';

/** Bodies shorter than this go uncompressed: the saving would not pay for the work and the header. */
export const MIN_COMPRESSED_BYTES = 1024;

/**
 * Above this size a static document gets the middle levels: brotli 11 on the Scalar bundle
 * costs many times the CPU of quality 7 for a few percent fewer bytes (ADR 13).
 */
const LARGE_STATIC_BYTES = 1024 * 1024;

const { BROTLI_PARAM_QUALITY, BROTLI_PARAM_MODE, BROTLI_MODE_TEXT, BROTLI_PARAM_SIZE_HINT, BROTLI_PARAM_LGWIN } = zlib.constants;

interface Levels {
  /**
   * Per response: brotli 0, gzip 1, the cheapest levels: each already cuts a page well past the
   * read API's goal for bytes, and each level above costs much more CPU for a few percent
   * fewer bytes (ADR 13).
   */
  response: number;
  static: number;
  largeStatic: number;
}
const BROTLI: Levels = { response: 0, static: 11, largeStatic: 7 };
const GZIP: Levels = { response: 1, static: 9, largeStatic: 9 };
/** zstd is not measured here (this Node has none): its fast level per response, 19 and 12 once. */
const ZSTD: Levels = { response: 1, static: 19, largeStatic: 12 };

type Effort = keyof Levels;

interface Compressor {
  sync(body: string | Buffer, effort: Effort): Buffer;
  async(body: string | Buffer, effort: Effort, done: (err: Error | null, out: Buffer) => void): void;
}

const byteLength = (body: string | Buffer) => (typeof body === 'string' ? Buffer.byteLength(body) : body.length);

/**
 * Per response, a 1 MB window instead of brotli's default 4 MB: the same bytes out for pages of
 * 100 and of 1,000, for much less CPU, because the default's larger buffers are mapped and
 * unmapped on every call (ADR 13). Static documents, compressed once, keep the default.
 */
const RESPONSE_WINDOW_BITS = 20;

const brotliOptions = (body: string | Buffer, effort: Effort): zlib.BrotliOptions => ({
  params: {
    [BROTLI_PARAM_QUALITY]: BROTLI[effort],
    [BROTLI_PARAM_MODE]: BROTLI_MODE_TEXT,
    [BROTLI_PARAM_SIZE_HINT]: byteLength(body),
    ...(effort === 'response' ? { [BROTLI_PARAM_LGWIN]: RESPONSE_WINDOW_BITS } : {}),
  },
});

const brotli: Compressor = {
  sync: (body, effort) => zlib.brotliCompressSync(body, brotliOptions(body, effort)),
  async: (body, effort, done) => zlib.brotliCompress(body, brotliOptions(body, effort), done),
};

const gzip: Compressor = {
  sync: (body, effort) => zlib.gzipSync(body, { level: GZIP[effort] }),
  async: (body, effort, done) => zlib.gzip(body, { level: GZIP[effort] }, done),
};

/** zlib.zstdCompress arrived in Node 22.15 / 23.8; on an older Node zstd is simply not offered. */
interface ZstdZlib {
  zstdCompressSync?: (body: string | Buffer, options: { params: Record<number, number> }) => Buffer;
  zstdCompress?: (
    body: string | Buffer,
    options: { params: Record<number, number> },
    done: (err: Error | null, out: Buffer) => void,
  ) => void;
  constants: { ZSTD_c_compressionLevel?: number };
}

function zstdCompressor(z: ZstdZlib): Compressor | undefined {
  const { zstdCompressSync, zstdCompress } = z;
  const level = z.constants.ZSTD_c_compressionLevel;
  if (typeof zstdCompressSync !== 'function' || typeof zstdCompress !== 'function' || typeof level !== 'number') return undefined;
  return {
    sync: (body, effort) => zstdCompressSync(body, { params: { [level]: ZSTD[effort] } }),
    async: (body, effort, done) => zstdCompress(body, { params: { [level]: ZSTD[effort] } }, done),
  };
}

const zstd = zstdCompressor(zlib as unknown as ZstdZlib);

/**
 * Preference on equal weights: brotli first (at the levels above it is both smaller and
 * faster than gzip on both pages measured), then zstd where it exists, then gzip.
 */
const COMPRESSORS: ReadonlyMap<Coding, Compressor> = new Map<Coding, Compressor>([
  ['br', brotli],
  ...(zstd ? [['zstd', zstd] as const] : []),
  ['gzip', gzip],
]);

export const AVAILABLE_CODINGS: readonly Coding[] = [...COMPRESSORS.keys()];

function compressor(coding: Coding): Compressor {
  const c = COMPRESSORS.get(coding);
  if (!c) throw new Error(`content coding ${coding} is not available on this Node`);
  return c;
}

/**
 * One response body, compressed on the event loop. Synchronous on purpose: brotli in the
 * thread pool costs several times the CPU of the same work on the main thread (page faults in
 * the worker's fresh allocations; ADR 13), and the thread hop buys no second core on a machine
 * whose cores are already busy.
 */
export function compressResponse(coding: Coding, body: string | Buffer): Buffer {
  return compressor(coding).sync(body, 'response');
}

/** A static document, compressed once in the thread pool (its best levels are slow, and must not block the event loop). */
export function compressStatic(coding: Coding, body: string | Buffer): Promise<Buffer> {
  const effort: Effort = byteLength(body) > LARGE_STATIC_BYTES ? 'largeStatic' : 'static';
  return new Promise((resolve, reject) => compressor(coding).async(body, effort, (err, out) => (err ? reject(err) : resolve(out))));
}

// The onSend hook. Every /api/v1 response says `Vary: Accept-Encoding` (200s, errors, small
// bodies alike) so a cache never hands one client's representation to another. A client that
// asks for nothing gets exactly the bytes the handler sent; otherwise only Content-Encoding and
// Content-Length change.

/**
 * Adds Accept-Encoding to Vary, keeping whatever Vary already names. Also for an answer that
 * bypasses the hooks: Fastify's frameworkErrors (a malformed URL, an over-long path segment) run
 * on a context without them; their small problem bodies are not worth compressing.
 */
export function varyOnAcceptEncoding(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  if (vary === undefined) {
    reply.header('vary', 'Accept-Encoding');
    return;
  }
  const names = String(vary).toLowerCase();
  if (!/(^|,)\s*(accept-encoding|\*)\s*(,|$)/.test(names)) reply.header('vary', `${vary}, Accept-Encoding`);
}

function bodyBytes(payload: string | Buffer): number {
  return typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
}

/**
 * The onSend hook for the responses whose URL `applies` to (callback form: no promise per
 * request). A compression failure is logged and the body goes out uncompressed: never a 500 for it.
 */
export const compressResponses =
  (applies: (url: string) => boolean): onSendHookHandler<unknown> =>
  (request: FastifyRequest, reply: FastifyReply, payload, done) => {
    if (!applies(request.url)) return done(null, payload);
    varyOnAcceptEncoding(reply);
    // null/undefined: a body-less answer (304, 204); a stream: not something the API sends.
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return done(null, payload);
    if (reply.hasHeader('content-encoding')) return done(null, payload);
    const coding = negotiateEncoding(request.headers['accept-encoding'], AVAILABLE_CODINGS);
    if (coding === 'identity' || bodyBytes(payload) < MIN_COMPRESSED_BYTES) return done(null, payload);
    let compressed: Buffer;
    try {
      compressed = compressResponse(coding, payload);
    } catch (err) {
      request.log.warn({ err, coding }, 'compression failed; sending the body uncompressed');
      return done(null, payload);
    }
    reply.header('content-encoding', coding);
    // Fastify sets Content-Length from the payload it is given; a length set by a handler would be stale.
    reply.removeHeader('content-length');
    done(null, compressed);
  };
