/**
 * A list page's response body: the stored documents with the envelope around them (never
 * re-serialized), the signed next cursor, and the compression the client asked for. The same
 * function runs on the event loop and in a page thread (page-threads.ts), so both send the
 * same bytes.
 */
import { registerByPath } from '../registers/catalogue.js';
import type { ListQuery, PageQueries } from '../store/page-queries.js';
import { type Coding, compressResponse, MIN_COMPRESSED_BYTES } from './content-codings.js';
import type { CursorCodec, CursorPosition } from './cursor.js';

/** Everything a page needs, as plain data: it crosses to a page thread by structured clone. */
export interface PageJob extends Omit<ListQuery, 'register'> {
  /** The register's path (`assets`). */
  register: string;
  /** Digest of the filters, bound into the next cursor. */
  digest: string;
  /** When the request was admitted: the next cursor's issue time. */
  issuedAt: number;
  /** What the client accepts, as negotiated: the body is compressed with it when large enough. */
  coding: Coding | 'identity';
}

export interface PageBody {
  body: Buffer;
  /** Set when the body is compressed. */
  encoding?: Coding;
  /** Why compression failed (the body then goes out uncompressed, never a 500). */
  compressionError?: string;
  /** Where the next page starts, when there is one: what the next cursor holds (for read-ahead). */
  next?: CursorPosition;
  /** The snapshot the page was read in, when the job asked (PostgreSQL read-ahead). */
  snapshot?: string;
  /**
   * Set when `body` is a view of a page thread's shared slot (page-slots.ts): call it once the
   * response that sent the body has closed, and not before, since the slot is then reused.
   */
  release?: () => void;
}

const DATA_OPEN_BYTES = Buffer.from('{"data":[');
const COMMA = 0x2c;

/**
 * The body written from the documents as strings, into one buffer of the exact size. Joining
 * them into one string and encoding that (as this did until issue 9's fourth session) made
 * three fresh copies of the page, and a large one costs a page fault per 4 KB on a VM: 6.3 ms
 * for a page of 1,000 (418 faults) against 0.4 ms written this way (docs/benchmarks.md).
 */
function writeBody(docs: readonly string[], tail: string): Buffer {
  let size = DATA_OPEN_BYTES.length + Math.max(0, docs.length - 1) + Buffer.byteLength(tail);
  for (const doc of docs) size += Buffer.byteLength(doc);
  const body = Buffer.allocUnsafe(size);
  let at = DATA_OPEN_BYTES.copy(body, 0);
  for (let i = 0; i < docs.length; i++) {
    if (i > 0) body[at++] = COMMA;
    at += body.write(docs[i] as string, at);
  }
  body.write(tail, at);
  return body;
}

export async function readPageBody(pages: PageQueries, cursors: CursorCodec, job: PageJob): Promise<PageBody> {
  const register = registerByPath(job.register);
  if (!register) throw new Error(`no register "${job.register}"`);
  const page = await pages.listPage({ ...job, register });
  const next =
    page.hasMore && page.last
      ? JSON.stringify(
          cursors.encode({
            workspaceId: job.workspaceId,
            register: job.register,
            position: page.last,
            digest: job.digest,
            issuedAt: job.issuedAt,
          }),
        )
      : 'null';
  const tail = `],"has_more":${page.hasMore},"next_cursor":${next}}`;
  const body = Buffer.isBuffer(page.documents)
    ? Buffer.concat([DATA_OPEN_BYTES, page.documents, Buffer.from(tail)])
    : writeBody(page.documents, tail);
  const found = { next: page.hasMore ? page.last : undefined, snapshot: page.snapshot };
  if (job.coding === 'identity' || body.length < MIN_COMPRESSED_BYTES) return { body, ...found };
  try {
    return { body: compressResponse(job.coding, body), encoding: job.coding, ...found };
  } catch (err) {
    return { body, compressionError: err instanceof Error ? err.message : String(err), ...found };
  }
}
