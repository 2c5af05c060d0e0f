/**
 * The references of records an import has changed but the database does not show yet: those of
 * the batch being applied (written at its end), and, in a dry run, everything the import would
 * have written. A delete line is judged on the stored referrers corrected by these, so a file
 * that repoints the referrers before the delete line succeeds, and one that names the record
 * again before it fails.
 */
import { IdIndex } from './id-index.js';
import { fieldOf, type Referrer } from './referrers.js';

/** What a changed record names now: its register, and its references by JSON pointer (as the line gave them). */
export interface PendingRecord {
  register: string;
  refs: readonly { pointer: string; id: string }[];
}

export class PendingReferences {
  /** The ids the import changed, numbered (a dry run of a million lines changes a million ids). */
  private readonly ids = new IdIndex();
  /** By id number: what it names now (null: deleted by the import). */
  private records: (PendingRecord | null)[] = [];
  /**
   * target -> the changed records that name it. Built at the first question (a delete line) and
   * kept up to date from then on: an import without delete lines never builds it, and a dry run
   * that tracks every line would otherwise index every reference of the file.
   */
  private byTarget: Map<string, Set<string>> | undefined;

  /** Whether the import changed `id`: its stored references no longer count. */
  overrides(id: string): boolean {
    return this.ids.find(id) >= 0;
  }

  /**
   * Whether the import left `id` present (true) or deleted it (false); undefined if it did not
   * change it. A dry run asks this in place of the database, which it never writes.
   */
  changed(id: string): boolean | undefined {
    const entry = this.ids.find(id);
    return entry < 0 ? undefined : this.records[entry] !== null;
  }

  set(id: string, value: PendingRecord | null): void {
    let entry = this.ids.find(id);
    if (this.byTarget && entry >= 0) {
      const before = this.records[entry];
      if (before) for (const r of before.refs) this.byTarget.get(r.id)?.delete(id);
    }
    if (this.byTarget && value) this.index(this.byTarget, id, value);
    if (entry < 0) entry = this.ids.add(id);
    // A copy of exactly its length: a dry run keeps every line's references to its end, and an
    // array grown by push holds room for 17 (120 bytes more per line, copied by each scavenge).
    this.records[entry] = value && { register: value.register, refs: value.refs.slice() };
  }

  private index(byTarget: Map<string, Set<string>>, source: string, value: PendingRecord): void {
    for (const r of value.refs) {
      const set = byTarget.get(r.id) ?? new Set<string>();
      byTarget.set(r.id, set);
      set.add(source);
    }
  }

  /** The changed records that name `target` now. */
  referrersOf(target: string): Referrer[] {
    if (!this.byTarget) {
      const byTarget = new Map<string, Set<string>>();
      for (const [entry, value] of this.records.entries()) if (value) this.index(byTarget, this.ids.idAt(entry), value);
      this.byTarget = byTarget;
    }
    const out: Referrer[] = [];
    for (const source of this.byTarget.get(target) ?? []) {
      const value = this.records[this.ids.find(source)];
      if (!value) continue;
      for (const r of value.refs) if (r.id === target) out.push({ register: value.register, field: fieldOf(r.pointer), id: source });
    }
    return out;
  }

  clear(): void {
    this.ids.clear();
    this.records = [];
    this.byTarget = undefined;
  }
}
