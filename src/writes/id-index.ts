/**
 * A set of ids, each numbered in the order it was added (0, 1, 2…), so that what an import
 * remembers per id can sit in arrays indexed by that number. An import of a million lines
 * remembers a million ids: as a Map of strings they doubled the server's peak RSS (the map, a
 * string per id, and the heap's headroom for both; docs/adr/0036 has the figures). Here the ids'
 * bytes sit end to end in one buffer and the table is typed arrays (nothing for the garbage
 * collector to walk), and a lookup that misses reads the table's arrays instead of a string per
 * entry scattered over the heap. A lookup compares the id's characters, so a hash collision is never
 * taken for a match.
 *
 * Ids are checked before they reach it: ASCII letters, digits, '_' and '-' (one byte each).
 */
export class IdIndex {
  /** Open addressing, linear probing: entry number + 1 per slot, 0 for empty. */
  private slots = new Int32Array(1 << 12);
  private hashes = new Uint32Array(1 << 11);
  /** Where entry i's id starts in `bytes`; entry i ends where entry i + 1 starts. */
  private starts = new Uint32Array((1 << 11) + 1);
  private bytes = Buffer.alloc(1 << 16);
  size = 0;

  /** The number of `id`, or -1 if it was never added. */
  find(id: string): number {
    const hash = hashOf(id);
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = (this.slots[slot] as number) - 1;
      if (entry < 0) return -1;
      if (this.hashes[entry] === hash && this.holds(entry, id)) return entry;
    }
  }

  /** Adds `id` (the caller asks `find` first: an id is added once) and returns its number. */
  add(id: string): number {
    const hash = hashOf(id);
    const entry = this.size;
    if (entry + 1 >= this.hashes.length) this.growEntries();
    if ((entry + 1) * 2 > this.slots.length) this.growSlots();
    const start = this.starts[entry] as number;
    const length = id.length;
    if (start + length > this.bytes.length) {
      const bigger = Buffer.alloc(Math.max(this.bytes.length * 2, start + length));
      this.bytes.copy(bigger, 0, 0, start);
      this.bytes = bigger;
    }
    // A loop, not Buffer#write: for ids this short the call into the runtime costs more.
    for (let i = 0; i < length; i++) this.bytes[start + i] = id.charCodeAt(i);
    this.starts[entry + 1] = start + length;
    this.hashes[entry] = hash;
    this.size++;
    this.place(entry, hash);
    return entry;
  }

  /** The id numbered `entry`. */
  idAt(entry: number): string {
    return this.bytes.toString('latin1', this.starts[entry], this.starts[entry + 1]);
  }

  /** Forgets every id (the arrays keep their size). */
  clear(): void {
    if (this.size === 0) return;
    this.slots.fill(0);
    this.size = 0;
  }

  private holds(entry: number, id: string): boolean {
    const start = this.starts[entry] as number;
    if ((this.starts[entry + 1] as number) - start !== id.length) return false;
    for (let i = 0; i < id.length; i++) if (this.bytes[start + i] !== id.charCodeAt(i)) return false;
    return true;
  }

  private place(entry: number, hash: number): void {
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    this.slots[slot] = entry + 1;
  }

  private growEntries(): void {
    const n = this.hashes.length * 2;
    this.hashes = widened(this.hashes, n);
    this.starts = widened(this.starts, n + 1);
  }

  private growSlots(): void {
    this.slots = new Int32Array(this.slots.length * 2);
    for (let entry = 0; entry < this.size; entry++) this.place(entry, this.hashes[entry] as number);
  }
}

/** `from`'s values at the start of a new array of `length`. */
export function widened(from: Uint32Array, length: number): Uint32Array<ArrayBuffer> {
  const to = new Uint32Array(length);
  to.set(from);
  return to;
}

/** FNV-1a over the id's characters (32 bits). */
function hashOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
