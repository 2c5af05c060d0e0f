/** What both dialects' `tableKeys` share: their catalogue's rows gathered into one entry per table. */
import type { TableKeys } from './engine.js';

/** A row per primary-key column (`column`, its place `pk`) or per foreign key (`parent`). */
export interface TableKeyRow {
  table: string;
  column: string | null;
  pk: number;
  parent: string | null;
}

export function tableKeysOf(rows: readonly TableKeyRow[]): TableKeys[] {
  const tables = new Map<string, TableKeys>();
  for (const row of rows) {
    let entry = tables.get(row.table);
    if (!entry) {
      entry = { table: row.table, primaryKey: [], parents: [] };
      tables.set(row.table, entry);
    }
    if (row.column !== null) entry.primaryKey[row.pk - 1] = row.column;
    if (row.parent !== null && row.parent !== row.table && !entry.parents.includes(row.parent)) entry.parents.push(row.parent);
  }
  return [...tables.values()];
}
