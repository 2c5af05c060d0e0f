/**
 * The first line at which an import wrote each id, to report an id the same file writes again.
 * An import of a million lines remembers a million ids: as a Map of strings that cost the server
 * about 275 MB of peak RSS (the map, a string per id, and the heap's headroom for both; measured
 * with `wsops import` of 1,000,000 people: 507 MB with the Map, 232 MB without tracking). Here the
 * ids' bytes sit end to end in one buffer and the table is typed arrays (about 60 MB at a
 * million ids, and nothing for the garbage collector to walk). A lookup compares the id's bytes,
 * so a hash collision is never taken for a repeat.
 */
export class FirstLines {
  /** Open addressing, linear probing: entry index + 1 per slot, 0 for empty. */
  private slots = new Int32Array(1 << 12);
  private hashes = new Uint32Array(1 << 11);
  private lines = new Uint32Array(1 << 11);
  /** Where entry i's id starts in `bytes`; entry i ends where entry i + 1 starts. */
  private starts = new Uint32Array((1 << 11) + 1);
  private bytes = Buffer.alloc(1 << 16);
  size = 0;

  /** The line `id` was first written at, or undefined. */
  get(id: string): number | undefined {
    const entry = this.find(id, hashOf(id));
    return entry < 0 ? undefined : this.lines[entry];
  }

  /** Remembers `id` first written at `line` (the caller asks `get` first: an id is set once). */
  set(id: string, line: number): void {
    const hash = hashOf(id);
    const entry = this.size;
    if (entry + 1 >= this.hashes.length) this.growEntries();
    if ((entry + 1) * 2 > this.slots.length) this.growSlots();
    // Ids are checked before they reach the report: ASCII letters, digits, '_' and '-'.
    const start = this.starts[entry] as number;
    const length = id.length;
    if (start + length > this.bytes.length) {
      const bigger = Buffer.alloc(Math.max(this.bytes.length * 2, start + length));
      this.bytes.copy(bigger, 0, 0, start);
      this.bytes = bigger;
    }
    this.bytes.write(id, start, 'latin1');
    this.starts[entry + 1] = start + length;
    this.hashes[entry] = hash;
    this.lines[entry] = line;
    this.size++;
    this.place(entry, hash);
  }

  private find(id: string, hash: number): number {
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = (this.slots[slot] as number) - 1;
      if (entry < 0) return -1;
      if (this.hashes[entry] === hash && this.idOf(entry) === id) return entry;
    }
  }

  private idOf(entry: number): string {
    return this.bytes.toString('latin1', this.starts[entry], this.starts[entry + 1]);
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
    this.lines = widened(this.lines, n);
    this.starts = widened(this.starts, n + 1);
  }

  private growSlots(): void {
    this.slots = new Int32Array(this.slots.length * 2);
    for (let entry = 0; entry < this.size; entry++) this.place(entry, this.hashes[entry] as number);
  }
}

/** `from`'s values at the start of a new array of `length`. */
function widened(from: Uint32Array, length: number): Uint32Array<ArrayBuffer> {
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
