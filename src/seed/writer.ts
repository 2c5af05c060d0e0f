import type { Register } from '../registers/define.js';
import type { RecordsTable } from '../store/schema.js';
import { type RecordObject, type RecordStore, toRow } from '../writes/records.js';

export const BATCH_SIZE = 5000;

/**
 * Buffers generated records as table rows and writes them in batches, so that a million
 * records never sit in memory at once. Generators call `add`; the driving loop awaits
 * `flushIfFull` between records and `flush` at the end.
 */
export class SeedWriter {
  private rows: RecordsTable[] = [];
  private done = 0;
  /** How many records the run will write, for progress reports; set once the plan is known. */
  total = 0;
  readonly counts: Record<string, number> = {};

  constructor(
    private readonly records: RecordStore,
    private readonly workspaceId: string,
    private readonly onProgress?: (done: number, total: number) => void,
    private readonly batchSize = BATCH_SIZE,
  ) {}

  add(register: Register, record: RecordObject): void {
    this.rows.push(toRow(this.workspaceId, register, record));
    this.counts[register.path] = (this.counts[register.path] ?? 0) + 1;
  }

  get written(): number {
    return this.done + this.rows.length;
  }

  async flushIfFull(): Promise<void> {
    if (this.rows.length >= this.batchSize) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.rows.length === 0) return;
    const batch = this.rows;
    this.rows = [];
    await this.records.insertMany(batch);
    this.done += batch.length;
    this.onProgress?.(this.done, Math.max(this.total, this.done));
  }
}
