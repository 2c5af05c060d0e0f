/**
 * A list page's response body: the stored documents with the envelope around them (never
 * re-serialized) and the signed next cursor. The body is the identity representation; the
 * onSend hook compresses it as the client asks, as it does every /api/v1 response (compression.ts).
 */
import { registerByPath } from '../registers/catalogue.js';
import type { ListQuery, PageQueries } from '../store/page-queries.js';
import type { CursorCodec, CursorPosition } from './cursor.js';

/** Everything a page needs, as plain data. */
export interface PageJob extends Omit<ListQuery, 'register'> {
  /** The register's path (`assets`). */
  register: string;
  /** Digest of the filters, bound into the next cursor. */
  digest: string;
  /** When the request was admitted: the next cursor's issue time. */
  issuedAt: number;
}

export interface PageBody {
  body: Buffer;
  /** Where the next page starts, when there is one: what the next cursor holds (for read-ahead). */
  next?: CursorPosition;
  /** The snapshot the page was read in, when the job asked (PostgreSQL read-ahead). */
  snapshot?: string;
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
  return { body, next: page.hasMore ? page.last : undefined, snapshot: page.snapshot };
}
