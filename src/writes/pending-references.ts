/**
 * The references of records an import has changed but the database does not show yet: those of
 * the batch being applied (written at its end), and, in a dry run, everything the import would
 * have written. A delete line is judged on the stored referrers corrected by these, so a file
 * that repoints the referrers before the delete line succeeds, and one that names the record
 * again before it fails.
 */
import type { Referrer } from './referrers.js';

export class PendingReferences {
  /** id -> what it names now (null: deleted by the import). */
  private readonly bySource = new Map<string, { register: string; refs: { field: string; id: string }[] } | null>();
  private readonly byTarget = new Map<string, Set<string>>();

  /** Whether the import changed `id`: its stored references no longer count. */
  overrides(id: string): boolean {
    return this.bySource.has(id);
  }

  set(id: string, value: { register: string; refs: { field: string; id: string }[] } | null): void {
    const before = this.bySource.get(id);
    if (before) for (const r of before.refs) this.byTarget.get(r.id)?.delete(id);
    this.bySource.set(id, value);
    if (value) {
      for (const r of value.refs) {
        const set = this.byTarget.get(r.id) ?? new Set<string>();
        this.byTarget.set(r.id, set);
        set.add(id);
      }
    }
  }

  /** The changed records that name `target` now. */
  referrersOf(target: string): Referrer[] {
    const out: Referrer[] = [];
    for (const source of this.byTarget.get(target) ?? []) {
      const value = this.bySource.get(source);
      if (!value) continue;
      for (const r of value.refs) if (r.id === target) out.push({ register: value.register, field: r.field, id: source });
    }
    return out;
  }

  clear(): void {
    this.bySource.clear();
    this.byTarget.clear();
  }
}
