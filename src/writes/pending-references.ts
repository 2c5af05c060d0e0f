/**
 * The references of records an import has changed but the database does not show yet: those of
 * the batch being applied (written at its end), and, in a dry run, everything the import would
 * have written. A delete line is judged on the stored referrers corrected by these, so a file
 * that repoints the referrers before the delete line succeeds, and one that names the record
 * again before it fails.
 */
import { fieldOf, type Referrer } from './referrers.js';

/** What a changed record names now: its register, and its references by JSON pointer (as the line gave them). */
export interface PendingRecord {
  register: string;
  refs: readonly { pointer: string; id: string }[];
}

export class PendingReferences {
  /** id -> what it names now (null: deleted by the import). */
  private readonly bySource = new Map<string, PendingRecord | null>();
  /**
   * target -> the changed records that name it. Built at the first question (a delete line) and
   * kept up to date from then on: an import without delete lines never builds it, and a dry run
   * that tracks every line would otherwise index every reference of the file.
   */
  private byTarget: Map<string, Set<string>> | undefined;

  /** Whether the import changed `id`: its stored references no longer count. */
  overrides(id: string): boolean {
    return this.bySource.has(id);
  }

  set(id: string, value: PendingRecord | null): void {
    if (this.byTarget) {
      const before = this.bySource.get(id);
      if (before) for (const r of before.refs) this.byTarget.get(r.id)?.delete(id);
      if (value) this.index(this.byTarget, id, value);
    }
    this.bySource.set(id, value);
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
      for (const [source, value] of this.bySource) if (value) this.index(byTarget, source, value);
      this.byTarget = byTarget;
    }
    const out: Referrer[] = [];
    for (const source of this.byTarget.get(target) ?? []) {
      const value = this.bySource.get(source);
      if (!value) continue;
      for (const r of value.refs) if (r.id === target) out.push({ register: value.register, field: fieldOf(r.pointer), id: source });
    }
    return out;
  }

  clear(): void {
    this.bySource.clear();
    this.byTarget = undefined;
  }
}
