/**
 * Shared memory for page bodies between a page thread and the event loop (ADR 16, addendum of
 * issue 9's tenth session).
 *
 * Why not a transfer: a body transferred from a thread arrives as a new ArrayBuffer, which V8
 * counts as external memory of the event loop's heap. At 3,500 pages of 100 a second that is
 * about 200 MB/s, and every 64 MB of it over the last full collection starts a mark-compact
 * ("external memory pressure" in `--trace-gc`): measured, one every 350 ms, and after a lull,
 * once V8 had shrunk the heap, a storm of incremental marking that cost a third of the server's
 * throughput on PostgreSQL. A body in a slot costs the event loop no new ArrayBuffer: its Buffer
 * is a view of the one SharedArrayBuffer the arena was created with.
 *
 * The protocol: a slot's state is 0 (free) or 1 (held). The thread takes a free slot with a
 * compare-and-exchange, writes the body and names the slot in its answer (postMessage orders
 * the write before the read). The event loop gives the slot back once the response that sent
 * it has closed: by then Node has handed the bytes to the kernel, or will never write them.
 * A body too large for a slot, or one finished while every slot is held, is transferred as
 * before: running out of slots is slower, never wrong.
 */

/** A page of 100 assets is about 59 KB uncompressed; larger pages are transferred. */
export const SLOT_BYTES = 128 * 1024;
/** Bodies a thread can have in flight at once: more than the connections of a busy server's pages. */
export const SLOT_COUNT = 64;

const FREE = 0;
const HELD = 1;

/** What both sides hold: created on the event loop, passed to the thread in its workerData. */
export interface SlotArena {
  memory: SharedArrayBuffer;
  states: SharedArrayBuffer;
}

export function createSlotArena(): SlotArena {
  return {
    memory: new SharedArrayBuffer(SLOT_BYTES * SLOT_COUNT),
    states: new SharedArrayBuffer(SLOT_COUNT * Int32Array.BYTES_PER_ELEMENT),
  };
}

/** The thread's side: puts a body in the lowest free slot (only the slots a load needs are ever touched). */
export class SlotWriter {
  private readonly memory: Uint8Array;
  private readonly states: Int32Array;

  constructor(arena: SlotArena) {
    this.memory = new Uint8Array(arena.memory);
    this.states = new Int32Array(arena.states);
  }

  /** The slot now holding `body`, or undefined when it is too large or every slot is held. */
  put(body: Uint8Array): number | undefined {
    if (body.length > SLOT_BYTES) return undefined;
    for (let slot = 0; slot < SLOT_COUNT; slot++) {
      if (Atomics.load(this.states, slot) !== FREE) continue;
      if (Atomics.compareExchange(this.states, slot, FREE, HELD) !== FREE) continue;
      this.memory.set(body, slot * SLOT_BYTES);
      return slot;
    }
    return undefined;
  }
}

/** The event loop's side: a view of a held slot, and its release. */
export class SlotReader {
  private readonly states: Int32Array;

  constructor(private readonly arena: SlotArena) {
    this.states = new Int32Array(arena.states);
  }

  /**
   * The body in `slot`, as a Buffer over the shared memory (no copy, no new ArrayBuffer), and
   * the release that gives the slot back to the thread: its bytes may be overwritten from then
   * on. A second call of the release does nothing.
   */
  take(slot: number, length: number): { body: Buffer; release: () => void } {
    if (!Number.isInteger(slot) || slot < 0 || slot >= SLOT_COUNT || length < 0 || length > SLOT_BYTES) {
      throw new Error(`the page thread named slot ${slot} of ${length} bytes`);
    }
    let held = true;
    const release = () => {
      if (held) Atomics.store(this.states, slot, FREE);
      held = false;
    };
    return { body: Buffer.from(this.arena.memory, slot * SLOT_BYTES, length), release };
  }

  /** Slots held now (tests, and what an operator would ask when pages slow down). */
  get held(): number {
    let n = 0;
    for (let slot = 0; slot < SLOT_COUNT; slot++) if (Atomics.load(this.states, slot) !== FREE) n++;
    return n;
  }
}
