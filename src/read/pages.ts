/**
 * List pages: a page's response body, the stored documents with the envelope around them (never
 * re-serialized) and the signed next cursor, read on the event loop (ADR 25: the page threads of
 * ADR 16 are gone) by the database's `Pages`. With a currency (read-ahead.ts), the page after
 * one that continues a walk is read ahead while the client receives the current one; without,
 * every page is read when it is asked for. The body is the identity representation; the onSend
 * hook compresses it as the client asks, as it does every /api/v1 response (compression.ts).
 */
import { registerByPath } from '../registers/catalogue.js';
import type { Currency, Pages } from '../store/database.js';
import type { ListQuery } from '../store/page-queries.js';
import type { CursorCodec, CursorPosition } from './list-query.js';
import { pageKey, ReadAhead, startsSync } from './read-ahead.js';

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

async function readPageBody(pages: Pick<Pages, 'listPage'>, cursors: CursorCodec, job: PageJob): Promise<PageBody> {
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

export class PageReader {
  readonly readAhead: ReadAhead<PageJob, PageBody>;

  constructor(
    readonly queries: Pick<Pages, 'listPage'>,
    private readonly cursors: CursorCodec,
    /** How read-ahead tells a page is still current; without it nothing is read ahead. */
    currency?: Currency,
  ) {
    this.readAhead = new ReadAhead<PageJob, PageBody>(currency);
  }

  /**
   * Reads a page: the one read ahead for it when there is one and it is current, else now. A
   * page that continues a walk this process answered, or that starts an `updated_since` sync,
   * has its next page read ahead once this response is on its way (`setImmediate`: after the
   * event loop has written it and taken what else is waiting).
   */
  async read(job: PageJob): Promise<PageBody> {
    if (!this.readAhead.enabled) return readPageBody(this.queries, this.cursors, job);
    const key = pageKey(job);
    const ahead = this.readAhead.take(key);
    const following = ahead !== undefined || this.readAhead.follows(key) || startsSync(job);
    // A page read ahead that is stale, or whose read failed, is read again now.
    const page = (ahead && (await ahead)) ?? (await readPageBody(this.queries, this.cursors, job));
    if (page.next) this.readAhead.answered(job, page.next, following ? this.readLater : undefined);
    return page;
  }

  private readonly readLater = (job: PageJob): Promise<PageBody> =>
    new Promise((resolve) => setImmediate(resolve)).then(() => readPageBody(this.queries, this.cursors, job));

  close(): void {
    this.readAhead.clear();
  }
}
