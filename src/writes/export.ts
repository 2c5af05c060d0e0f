/**
 * A workspace's records as NDJSON upsert operations: the import's own format, so
 * `wsops export | wsops import` moves a workspace between databases or deployments. Registers
 * come parents first (locations, people, ...) so that references point back, and each register
 * in its (updated_at, id) order, read by keyset in pages; nothing is held whole.
 */
import { sql } from '#kysely';
import { AppError } from '../errors.js';
import { registerByPath } from '../registers/catalogue.js';
import type { Register } from '../registers/define.js';
import { resolveRegister } from '../registers/resolve-register.js';
import type { Database } from '../store/database.js';
import { nextSlice } from '../store/record-batches.js';
import { getWorkspace } from '../workspaces/workspaces.js';

/** What this file takes of the services built at start (services.ts). */
export interface ExportServices {
  database: Database;
}

/** Parents before the records that name them. */
export const EXPORT_ORDER: readonly string[] = [
  'locations',
  'people',
  'vendors',
  'systems',
  'purchase-requests',
  'assets',
  'learning-assignments',
  'tasks',
  'handovers',
  'transitions',
  'workplace-records',
];

export function exportRegisters(names?: readonly string[]): Register[] {
  const wanted = names?.length ? names : EXPORT_ORDER;
  for (const n of wanted) resolveRegister(n);
  return EXPORT_ORDER.filter((n) => wanted.includes(n)).map((n) => registerByPath(n) as Register);
}

/**
 * The export route's `registers`: register names separated by commas, at least one, none
 * empty (the document declares it as a form-style array of EXPORT_ORDER's names); exported in
 * EXPORT_ORDER whatever the order given. Absent: every register.
 */
export function exportRegistersParam(text: string | undefined): Register[] {
  if (text === undefined) return exportRegisters();
  const names = text.split(',');
  const wrong = names.find((n) => !EXPORT_ORDER.includes(n));
  if (wrong !== undefined) {
    const what = wrong === '' ? 'an empty name' : `"${wrong.slice(0, 60)}"`;
    throw new AppError(
      'invalid_parameter',
      `registers holds ${what}; give register names separated by commas (no spaces), from: ${EXPORT_ORDER.join(', ')}. Leave the parameter out to export every register.`,
      { param: 'registers' },
    );
  }
  return exportRegisters(names);
}

/** Yields NDJSON text, a page of lines at a time. */
export async function* exportRecords(
  services: ExportServices,
  workspaceId: string,
  registers: readonly Register[],
): AsyncGenerator<string> {
  await getWorkspace(services.database.db, workspaceId);
  const db = services.database.db;
  const page = services.database.engine.exportPageRows;
  for (const register of registers) {
    const head = `{"register":"${register.path}","op":"upsert","record":`;
    let after: { u: string; i: string } | undefined;
    for (;;) {
      let q = db
        .selectFrom('records')
        .select(['id', 'updated_at', 'doc'])
        .where('workspace_id', '=', workspaceId)
        .where('register', '=', register.path);
      if (after) {
        const { u, i } = after;
        // A row-value comparison: both databases read it as one range of the order index (an OR
        // of the two conditions makes PostgreSQL scan each register from its start on every page).
        q = q.where(sql<boolean>`(updated_at, id) > (${u}, ${i})`);
      }
      const rows = await q.orderBy('updated_at').orderBy('id').limit(page).execute();
      if (rows.length === 0) break;
      let text = '';
      for (const r of rows) text += `${head}${r.doc}}\n`;
      yield text;
      // Other requests get a turn between pages. On SQLite a page's query does not leave the
      // event loop, and the stream asks for the next page at once: a large export held every
      // other request for its whole length (ADR 36).
      await nextSlice();
      const last = rows[rows.length - 1] as { id: string; updated_at: string };
      after = { u: last.updated_at, i: last.id };
      if (rows.length < page) break;
    }
  }
}

/** Records per register and when each was last written: the console's Data page. */
export async function registerSummary(
  services: ExportServices,
  workspaceId: string,
): Promise<{ register: string; records: number; last_written_at: string | null }[]> {
  const rows = await services.database.db
    .selectFrom('records')
    .select(['register', sql<number>`count(*)`.as('n'), sql<string | null>`max(updated_at)`.as('last')])
    .where('workspace_id', '=', workspaceId)
    .groupBy('register')
    .execute();
  const by = new Map(rows.map((r) => [r.register, r]));
  return EXPORT_ORDER.map((name) => ({
    register: name,
    records: Number(by.get(name)?.n ?? 0),
    last_written_at: by.get(name)?.last ?? null,
  }));
}
