/**
 * Broker connections reused per endpoint, like the HTTP agents of send.ts: keyed by endpoint id
 * and the checked addresses (an endpoint whose addresses changed gets a new connection to the
 * new ones), closed when unused for `idleMs`, when they break, or when the endpoint is disabled.
 * Opening is shared: the attempts of a batch that start together wait for one connection.
 */
export interface Closable {
  /** True once the connection broke or was closed: the next attempt opens another. */
  readonly closed: boolean;
  close(): Promise<void>;
}

export const CONNECTION_IDLE_MS = 60_000;

interface Pooled<C> {
  endpointId: string;
  opening: Promise<C>;
  inUse: number;
  lastUsed: number;
}

export class ConnectionPool<C extends Closable> {
  private readonly entries = new Map<string, Pooled<C>>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly idleMs: number = CONNECTION_IDLE_MS,
    private readonly now: () => number = performance.now.bind(performance),
  ) {
    this.timer = setInterval(() => void this.evictIdle(), Math.max(1000, Math.min(idleMs, 30_000)));
    this.timer.unref();
  }

  get size(): number {
    return this.entries.size;
  }

  /** Runs `use` with the endpoint's open connection (opened by `open` when there is none or it broke). */
  async with<T>(
    endpointId: string,
    addresses: readonly string[],
    extra: string,
    open: () => Promise<C>,
    use: (c: C) => Promise<T>,
  ): Promise<T> {
    const key = `${endpointId}|${addresses.join(',')}|${extra}`;
    let entry = this.entries.get(key);
    if (entry) {
      const current = await entry.opening.catch(() => undefined);
      if (!current || current.closed) {
        if (this.entries.get(key) === entry) this.entries.delete(key);
        entry = this.entries.get(key);
      }
    }
    if (!entry) {
      const opening = open();
      entry = { endpointId, opening, inUse: 0, lastUsed: this.now() };
      this.entries.set(key, entry);
      const mine = entry;
      // A connection that could not open is not kept: the next attempt tries again.
      opening.catch(() => {
        if (this.entries.get(key) === mine) this.entries.delete(key);
      });
    }
    entry.inUse++;
    try {
      return await use(await entry.opening);
    } finally {
      entry.inUse--;
      entry.lastUsed = this.now();
    }
  }

  async evictIdle(): Promise<number> {
    const cutoff = this.now() - this.idleMs;
    return this.drop(([, e]) => e.inUse === 0 && e.lastUsed <= cutoff);
  }

  /** Closes the endpoint's connections (disabled: nothing more is sent to it). */
  async forget(endpointId: string): Promise<void> {
    await this.drop(([, e]) => e.endpointId === endpointId);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.drop(() => true);
  }

  private async drop(which: (entry: [string, Pooled<C>]) => boolean): Promise<number> {
    const gone = [...this.entries].filter(which);
    for (const [key] of gone) this.entries.delete(key);
    await Promise.all(gone.map(([, e]) => e.opening.then((c) => c.close()).catch(() => {})));
    return gone.length;
  }
}
