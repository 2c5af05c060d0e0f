/**
 * Runs the work of one key (a workspace) one at a time in this process, in arrival order, while
 * other keys' work runs beside it, with at most `maxWaiting` pieces waiting: what an expensive
 * read costs is paid by the workspace that sends it, in waiting and then in refusals, and never
 * occupies more than one of the database's sessions per workspace and process. A budget, not a
 * guarantee: correctness never depends on it.
 */
export class OnePerKey {
  private readonly queues = new Map<string, { tail: Promise<unknown>; size: number }>();

  constructor(private readonly maxWaiting: number) {}

  /** `work` once the key's earlier work is done; undefined (nothing run) when too much already waits. */
  run<T>(key: string, work: () => Promise<T>): Promise<T> | undefined {
    const queue = this.queues.get(key) ?? { tail: Promise.resolve(), size: 0 };
    if (queue.size > this.maxWaiting) return undefined;
    this.queues.set(key, queue);
    queue.size++;
    const result = queue.tail.then(work, work);
    const tail = result.catch(() => undefined);
    queue.tail = tail;
    void tail.then(() => {
      // The last piece of work of a key removes its entry, so idle keys hold no memory.
      if (--queue.size === 0) this.queues.delete(key);
    });
    return result;
  }
}
