/**
 * One register's operations: `list` (every record across pages, as an async iterable),
 * `listPage` (one page, for callers that keep their own cursor), `get`, and the deletions feed:
 * `deletions` (every tombstone since an instant, across pages) and `deletionsPage`.
 */
import type { DeletionsParams, Tombstone } from './generated/registers.js';
import type { Query, RequestOptions, Transport } from './transport.js';

export type { DeletionsParams, Tombstone };

/** The list envelope: `next_cursor` is null exactly when `has_more` is false. */
export interface Page<R> {
  data: R[];
  has_more: boolean;
  next_cursor: string | null;
}

/** Paging parameters every list takes, beside the register's filters. */
export interface PageParams {
  limit?: number;
  cursor?: string;
  updated_since?: string;
}

export class RegisterResource<R, P> {
  constructor(
    private readonly transport: Transport,
    /** The list path's last segment (`purchase-requests`). */
    readonly path: string,
  ) {}

  /** One page. Pass the previous page's `next_cursor` as `cursor`, with the same filters. */
  listPage(params: P & PageParams = {} as P & PageParams, options: RequestOptions = {}): Promise<Page<R>> {
    return this.transport.get<Page<R>>(`/api/v1/${this.path}`, params as Query, options);
  }

  /**
   * Every record matching `params`, across pages, in `(updated_at, id)` order. Pages are
   * fetched as the caller iterates; stopping early fetches nothing more.
   */
  async *list(
    params: Omit<P, 'cursor'> & Omit<PageParams, 'cursor'> = {} as Omit<P, 'cursor'> & Omit<PageParams, 'cursor'>,
    options: RequestOptions = {},
  ): AsyncGenerator<R, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.listPage({ ...params, ...(cursor ? { cursor } : {}) } as P & PageParams, options);
      yield* page.data;
      cursor = page.has_more && page.next_cursor ? page.next_cursor : undefined;
    } while (cursor);
  }

  /**
   * One page of the deletions feed. Pass the previous page's `next_cursor` as `cursor`, with the
   * same `since`.
   */
  deletionsPage(params: DeletionsParams = {}, options: RequestOptions = {}): Promise<Page<Tombstone>> {
    return this.transport.get<Page<Tombstone>>(`/api/v1/${this.path}/deletions`, params as Query, options);
  }

  /**
   * Every tombstone deleted after `since` (all that are kept, without it), across pages, in
   * `(deleted_at, id)` order. Delete a copy only when its `updated_at` is older than the
   * tombstone's `deleted_at`. A `since` before the retention horizon is an InvalidRequestError with
   * code `deletions_beyond_retention`: walk the list in full instead.
   */
  async *deletions(params: Omit<DeletionsParams, 'cursor'> = {}, options: RequestOptions = {}): AsyncGenerator<Tombstone, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.deletionsPage({ ...params, ...(cursor ? { cursor } : {}) }, options);
      yield* page.data;
      cursor = page.has_more && page.next_cursor ? page.next_cursor : undefined;
    } while (cursor);
  }

  /** One record by id; a NotFoundError when the workspace has no such record. */
  get(id: string, options: RequestOptions = {}): Promise<R> {
    return this.transport.get<R>(`/api/v1/${this.path}/${encodeURIComponent(id)}`, {}, options);
  }
}
