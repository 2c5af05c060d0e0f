/** The first line at which an import wrote each id, to report an id the same file writes again. */
import { IdIndex, widened } from './id-index.js';

export class FirstLines {
  private readonly ids = new IdIndex();
  /** By id number. */
  private lines = new Uint32Array(1 << 11);

  get size(): number {
    return this.ids.size;
  }

  /** The line `id` was first written at, or undefined. */
  get(id: string): number | undefined {
    const entry = this.ids.find(id);
    return entry < 0 ? undefined : this.lines[entry];
  }

  /** Remembers `id` first written at `line` (the caller asks `get` first: an id is set once). */
  set(id: string, line: number): void {
    const entry = this.ids.add(id);
    if (entry >= this.lines.length) this.lines = widened(this.lines, this.lines.length * 2);
    this.lines[entry] = line;
  }
}
