/**
 * Runs the work of one key (a workspace) one at a time in this process, in arrival order, and
 * paced: after a piece that took d ms, the key's next piece starts no sooner than d × (1/share − 1)
 * ms later, so one key's work takes at most `share` of the time, whatever its client sends. At
 * most `maxWaiting` pieces wait; more are refused. Other keys' work runs beside it. What an
 * expensive read costs is so paid by the workspace that sends it, in waiting and then in refusals,
 * not by every other workspace. A budget, not a guarantee: correctness never depends on it.
 */
interface Queue {
  tail: Promise<unknown>;
  /** Pieces running or waiting. */
  size: number;
  /** performance.now() before which the next piece does not start. */
  readyAt: number;
}

export class OnePerKey {
  private readonly queues = new Map<string, Queue>();

  constructor(
    private readonly maxWaiting: number,
    private readonly share = 1,
  ) {}

  /** `work` once the key's earlier work is done and paid for; undefined (nothing run) when too much already waits. */
  run<T>(key: string, work: () => Promise<T>): Promise<T> | undefined {
    this.prune();
    const queue = this.queues.get(key) ?? { tail: Promise.resolve(), size: 0, readyAt: 0 };
    if (queue.size > this.maxWaiting) return undefined;
    this.queues.set(key, queue);
    queue.size++;
    const paced = async () => {
      const wait = queue.readyAt - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const started = performance.now();
      try {
        return await work();
      } finally {
        const ended = performance.now();
        queue.readyAt = ended + (ended - started) * (1 / this.share - 1);
      }
    };
    const result = queue.tail.then(paced, paced);
    queue.tail = result.catch(() => undefined);
    void queue.tail.then(() => {
      queue.size--;
    });
    return result;
  }

  /** Keys with nothing waiting and their pause over hold no memory. */
  private prune(): void {
    const now = performance.now();
    for (const [key, queue] of this.queues) if (queue.size === 0 && queue.readyAt <= now) this.queues.delete(key);
  }
}
