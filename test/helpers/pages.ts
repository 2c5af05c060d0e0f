/**
 * Reading list pages the way a client does: one page with its bytes as sent, or a whole walk
 * following `next_cursor`.
 */
import assert from 'node:assert/strict';
import type { Harness } from './harness.js';

export interface Page {
  /** The response body exactly as sent. */
  body: string;
  data: Record<string, unknown>[];
  has_more: boolean;
  next_cursor: string | null;
}

export async function page(h: Harness, key: string, url: string): Promise<Page> {
  const res = await h.get(url, key);
  assert.equal(res.status, 200, res.body);
  return { body: res.body, ...res.json };
}

/** Walks a list at `limit`, returning every page. */
export async function walkPages(h: Harness, key: string, url: string, limit: number): Promise<Page[]> {
  const pages: Page[] = [];
  let cursor: string | null = null;
  do {
    const sep = url.includes('?') ? '&' : '?';
    const p: Page = await page(h, key, `${url}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    pages.push(p);
    cursor = p.next_cursor;
    assert.equal(p.has_more, cursor !== null, 'has_more is true exactly when a next_cursor is given');
  } while (cursor);
  return pages;
}
