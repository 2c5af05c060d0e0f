/**
 * A bounded in-process cache of what authentication needs per key id (ADR 14), so a request
 * with a known key costs no database lookup. It is only as good as its invalidation, which
 * lives outside it: a `trusted` check run on every request (SQLite: the version stamp moved by
 * triggers; PostgreSQL: the barrier on the LISTEN session) and `invalidate` calls (what the
 * check found, notifications, the listener lost or back). What is cached is never a decision: revocation, expiry (against
 * the injected clock), environment and the secret are checked on every request, cached or not.
 */
import { addressMatcher } from '../ip-ranges.js';
import { ALWAYS_INSTALLED } from '../registers/define.js';
import type { KeyContext } from './key-context.js';
import type { AuthRow } from './key-lookup.js';

/** What authentication reads of a key, parsed once per load. */
export interface KeyEntry {
  readonly keyId: string;
  readonly environment: string;
  /** SHA-256 of the secret, decoded once (compared in constant time on every request). */
  readonly secretHash: Buffer;
  readonly expiresAtMs: number;
  /** When it is (or was) revoked; a rolled key's lies in the future until its grace ends. */
  readonly revokedAtMs: number | null;
  /** The key's IP allowlist as a test of the client address; undefined: any address. */
  readonly allows: ((address: string) => boolean) | undefined;
  /** Last use as this process knows it; moved forward when this process records a use. */
  lastUsedMs: number | null;
  /** Handed to the routes as is on every request (frozen: shared by every request of the key). */
  readonly context: KeyContext;
}

export function keyEntry(row: AuthRow): KeyEntry {
  const context: KeyContext = Object.freeze({
    keyId: row.key_id,
    workspaceId: row.workspace_id,
    environment: row.environment,
    scopes: Object.freeze(row.scopes.split(' ')),
    expiresAt: row.expires_at,
    modules: new Set([...ALWAYS_INSTALLED, ...row.modules.split(' ').filter(Boolean)]),
  });
  return {
    keyId: row.key_id,
    environment: row.environment,
    secretHash: Buffer.from(row.secret_hash, 'hex'),
    expiresAtMs: Date.parse(row.expires_at),
    revokedAtMs: row.revoked_at === null ? null : Date.parse(row.revoked_at),
    allows: row.allowed_ips ? addressMatcher(row.allowed_ips.split(' ')) : undefined,
    lastUsedMs: row.last_used_at === null ? null : Date.parse(row.last_used_at),
    context,
  };
}

export interface KeyCacheOptions {
  /**
   * Run once per request before the cache is read: false means "bypass" (nothing is read from
   * or stored into the cache). It may call `invalidate` first (the SQLite stamp moved, the
   * PostgreSQL barrier delivered notifications).
   */
  trusted: () => boolean | Promise<boolean>;
  close?: () => Promise<void>;
  /** Most entries held; the oldest stored goes first. */
  maxEntries?: number;
  /** Backstop only (a lost notification on a silently dead connection): entries older are reloaded. */
  ttlMs?: number;
  /** Monotonic milliseconds for the TTL (not the business clock, which tests move by days). */
  monotonic?: () => number;
}

export interface KeyCacheStats {
  hits: number;
  misses: number;
  bypassed: number;
  /** Invalidations received (a notification, a moved stamp, the listener lost or back). */
  invalidations: number;
  entries: number;
  trusted: boolean;
}

interface Stored {
  entry: KeyEntry;
  workspaceId: string;
  storedAt: number;
}

export const KEY_CACHE_TTL_MS = 5_000;
export const KEY_CACHE_MAX_ENTRIES = 10_000;

export class KeyCache {
  private readonly entries = new Map<string, Stored>();
  /** Moves on every invalidation: a load that began before one must not store what it read. */
  private generation = 0;
  private readonly maxEntries: number;
  private readonly ttlMs: number;
  private readonly monotonic: () => number;
  private hits = 0;
  private misses = 0;
  private bypassed = 0;
  private invalidations = 0;
  private lastTrusted = false;

  constructor(private readonly options: KeyCacheOptions) {
    this.maxEntries = options.maxEntries ?? KEY_CACHE_MAX_ENTRIES;
    this.ttlMs = options.ttlMs ?? KEY_CACHE_TTL_MS;
    this.monotonic = options.monotonic ?? performance.now.bind(performance);
  }

  /**
   * The key's entry: from the cache when it may be trusted and holds a fresh one, else from
   * `load` (the database). Unknown key ids are never stored, so every guess reaches the database.
   */
  async resolve(keyId: string, load: () => Promise<AuthRow | undefined>): Promise<KeyEntry | undefined> {
    const trusted = await this.options.trusted();
    this.lastTrusted = trusted;
    if (trusted) {
      const stored = this.entries.get(keyId);
      if (stored !== undefined) {
        if (this.monotonic() - stored.storedAt <= this.ttlMs) {
          this.hits++;
          return stored.entry;
        }
        this.entries.delete(keyId);
      }
      this.misses++;
    } else {
      this.bypassed++;
    }
    const generation = this.generation;
    const row = await load();
    if (row === undefined) return undefined;
    const entry = keyEntry(row);
    if (trusted && generation === this.generation) this.store(keyId, row.workspace_id, entry);
    return entry;
  }

  private store(keyId: string, workspaceId: string, entry: KeyEntry): void {
    if (this.entries.size >= this.maxEntries && !this.entries.has(keyId)) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(keyId, { entry, workspaceId, storedAt: this.monotonic() });
  }

  /** Drops what a change may have affected: `key:<id>`, `workspace:<id>`, or anything else: all. */
  invalidate(what: string): void {
    this.generation++;
    this.invalidations++;
    if (what.startsWith('key:')) {
      this.entries.delete(what.slice('key:'.length));
    } else if (what.startsWith('workspace:')) {
      const workspaceId = what.slice('workspace:'.length);
      for (const [keyId, stored] of this.entries) if (stored.workspaceId === workspaceId) this.entries.delete(keyId);
    } else {
      this.entries.clear();
    }
  }

  stats(): KeyCacheStats {
    return {
      hits: this.hits,
      misses: this.misses,
      bypassed: this.bypassed,
      invalidations: this.invalidations,
      entries: this.entries.size,
      trusted: this.lastTrusted,
    };
  }

  async close(): Promise<void> {
    this.invalidate('*');
    await this.options.close?.();
  }
}
