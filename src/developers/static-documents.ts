/**
 * A static document (the OpenAPI document, the Scalar bundle) served in every content coding
 * the client accepts. Each coding is compressed once, at the first request that asks for it,
 * at the static levels (compression.ts), and kept; a server that is never asked for
 * brotli never spends the CPU making it. Each representation has its own ETag (the
 * identity ETag with `-br`, `-gzip`, `-zstd` inside the quotes), so a cache revalidates the
 * bytes it holds and a 304 answers only for the representation negotiated now.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { AVAILABLE_CODINGS, type Coding, compressStatic, MIN_COMPRESSED_BYTES, negotiateEncoding } from '../http/compression.js';

export interface StaticDocument {
  path: string;
  contentType: string;
  /** The document, or a function that reads it at the first request (a large file not every process serves). */
  body: string | Buffer | (() => string | Buffer);
  cacheControl: string;
  /** Further headers of every answer (the portal's CSP). */
  headers?: Record<string, string>;
}

/** A weak comparison is right here: the body is identical byte for byte for a given ETag. */
function ifNoneMatchMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === '*' || tag === etag;
  });
}

interface Representations {
  body: string | Buffer;
  etags: ReadonlyMap<Coding | 'identity', string>;
  /** Each coding's bytes, made at the first request that asks for it. */
  compressed: Map<Coding, Promise<Buffer>>;
  small: boolean;
}

function representations(body: string | Buffer): Representations {
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 27);
  return {
    body,
    etags: new Map([['identity', `"${hash}"`], ...AVAILABLE_CODINGS.map((c) => [c, `"${hash}-${c}"`] as const)]),
    compressed: new Map(),
    small: Buffer.byteLength(body) < MIN_COMPRESSED_BYTES,
  };
}

function variant(r: Representations, coding: Coding): Promise<Buffer> {
  let made = r.compressed.get(coding);
  if (!made) {
    made = compressStatic(coding, r.body);
    // A failure is not kept: the next request tries again.
    made.catch(() => r.compressed.delete(coding));
    r.compressed.set(coding, made);
  }
  return made;
}

export function serveStaticDocument(app: FastifyInstance, doc: StaticDocument): void {
  const { body } = doc;
  const load = typeof body === 'function' ? body : () => body;
  let ready: Representations | undefined;

  app.get(doc.path, async (request, reply) => {
    ready ??= representations(load());
    const r = ready;
    const coding = r.small ? 'identity' : negotiateEncoding(request.headers['accept-encoding'], AVAILABLE_CODINGS);
    const etag = r.etags.get(coding) as string;
    reply.headers({ ...doc.headers, etag, 'cache-control': doc.cacheControl, vary: 'Accept-Encoding' });
    if (ifNoneMatchMatches(request.headers['if-none-match'], etag)) return reply.code(304).send();
    reply.type(doc.contentType);
    if (coding === 'identity') return reply.send(r.body);
    try {
      return reply.header('content-encoding', coding).send(await variant(r, coding));
    } catch (err) {
      request.log.warn({ err, coding, path: doc.path }, 'compression failed; sending the document uncompressed');
      return reply.removeHeader('content-encoding').header('etag', r.etags.get('identity')).send(r.body);
    }
  });
}
