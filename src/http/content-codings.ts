/**
 * The content codings this server can send, in its order of preference, and how each is
 * made. Levels were chosen by measurement (docs/benchmarks.md, "Compression levels"; ADR 13):
 * per response the fastest level that still cuts a page about fivefold; for a static document,
 * compressed once, the smallest output whose one-time cost stays under about half a second.
 */
import zlib from 'node:zlib';

export type Coding = 'br' | 'zstd' | 'gzip';

/** Bodies shorter than this go uncompressed: the saving would not pay for the work and the header. */
export const MIN_COMPRESSED_BYTES = 1024;

/**
 * Above this size a static document gets the middle levels: brotli 11 on the 4.3 MB Scalar
 * bundle costs 8 s of CPU for 10% fewer bytes than quality 7 (0.4 s).
 */
const LARGE_STATIC_BYTES = 1024 * 1024;

const { BROTLI_PARAM_QUALITY, BROTLI_PARAM_MODE, BROTLI_MODE_TEXT, BROTLI_PARAM_SIZE_HINT, BROTLI_PARAM_LGWIN } = zlib.constants;

interface Levels {
  /**
   * Per response: brotli 0, gzip 1. A 56 KB page: brotli 0 gives 13.4 KB in 0.09 ms, brotli 1
   * 11.7 KB in 0.15 ms, gzip 1 12.5 KB in 0.16 ms; a 583 KB page: 4.7× smaller in 0.9 ms
   * against 5.5× in 1.7 ms (issue 9 asks at least 3.5×).
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
 * Per response, a 1 MB window instead of brotli's default 4 MB: the same bytes out for a page of
 * 100 (13,846 of 57,840) and of 1,000 (123,095 of 578,972), but 75 µs of CPU instead of 203 µs
 * and 936 µs instead of 1,237 µs. The default's larger buffers were mapped and unmapped on every
 * call (a third of the cost was system time). Static documents, compressed once, keep it.
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
 * One response body, compressed on the event loop. Synchronous on purpose: measured here,
 * brotli in the thread pool cost 8× the CPU of the same work on the main thread (a 58 KB
 * page: 1.2–1.5 ms against 0.15–0.2 ms, page faults in the worker's fresh allocations), and
 * the thread hop buys no second core on a machine whose cores are already busy.
 */
export function compressResponse(coding: Coding, body: string | Buffer): Buffer {
  return compressor(coding).sync(body, 'response');
}

/** A static document, compressed once in the thread pool (up to 0.5 s of work must not block the event loop). */
export function compressStatic(coding: Coding, body: string | Buffer): Promise<Buffer> {
  const effort: Effort = byteLength(body) > LARGE_STATIC_BYTES ? 'largeStatic' : 'static';
  return new Promise((resolve, reject) => compressor(coding).async(body, effort, (err, out) => (err ? reject(err) : resolve(out))));
}
