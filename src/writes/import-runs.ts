/**
 * Which process runs an import, and what becomes of an import whose process is gone. An import
 * keeps its row in `record_imports` up to date with each batch it commits (in the batch's own
 * transaction), so a process killed mid-way leaves the lines and counts it had applied. When the
 * imports are read (the console's Data page, `wsops imports`), one without a finish whose
 * process is gone is marked interrupted with those figures.
 *
 * Gone means: its process was on this machine (same host name and PID namespace) and no longer
 * exists, or it has not shown it was alive for STALE_MS (another machine, or its PID reused).
 */
import { readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Kysely } from '#kysely';
import { recordAudit } from '../audit/audit.js';
import type { DB } from '../store/schema.js';

/** How often a running import shows it is alive while it waits for its client between batches. */
export const HEARTBEAT_MS = 30_000;
/** An import not seen alive for this long is taken as interrupted, wherever its process ran. */
export const STALE_MS = 10 * HEARTBEAT_MS;

/** The PID namespace: two containers may share a host name, never a namespace. */
function pidNamespace(): string {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return '-';
  }
}

const MACHINE = `${hostname()} ${pidNamespace()}`;

/** This process, as an import's `owner`. */
export const THIS_PROCESS = `${MACHINE} ${process.pid}`;

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, run by another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the process that ran an unfinished import is gone. */
export function ownerGone(owner: string | null, aliveAt: string | null, startedAt: string, now: number): boolean {
  // Imports begun before owners were recorded ran under the version stopped to migrate.
  if (owner === null) return true;
  if (now - Date.parse(aliveAt ?? startedAt) > STALE_MS) return true;
  const split = owner.lastIndexOf(' ');
  if (owner.slice(0, split) !== MACHINE) return false;
  const pid = Number(owner.slice(split + 1));
  return pid !== process.pid && !processExists(pid);
}

/** What an interrupted import's stored report says, beside the counts it had committed. */
export function interruptedNote(lines: number): string {
  return `its process stopped (killed, or its machine or database lost) after ${lines} lines were applied in whole batches; run the same import again: it converges`;
}

/**
 * Marks the workspace's unfinished imports whose process is gone as interrupted (finished now,
 * `interrupted` in the report, with the lines and counts of the batches it committed), each with
 * its audit event. Returns how many it marked.
 */
export async function markInterruptedImports(db: Kysely<DB>, workspaceId: string, now: number): Promise<number> {
  const unfinished = await db
    .selectFrom('record_imports')
    .select(['id', 'actor', 'owner', 'alive_at', 'started_at', 'lines', 'refused', 'report', 'dry_run', 'atomic'])
    .where('workspace_id', '=', workspaceId)
    .where('finished_at', 'is', null)
    .execute();
  let marked = 0;
  for (const run of unfinished) {
    if (!ownerGone(run.owner, run.alive_at, run.started_at, now)) continue;
    const at = new Date(now).toISOString();
    const report = {
      ...(JSON.parse(run.report || '{}') as Record<string, unknown>),
      interrupted: true,
      failure: interruptedNote(run.lines),
    };
    const updated = await db
      .updateTable('record_imports')
      .set({ finished_at: at, report: JSON.stringify({ ...report, finished_at: at }) })
      .where('id', '=', run.id)
      .where('finished_at', 'is', null)
      .executeTakeFirst();
    // Another reader marked it first.
    if (Number(updated.numUpdatedRows) === 0) continue;
    marked++;
    if (run.dry_run) continue;
    await recordAudit(db, {
      workspaceId,
      at,
      actor: run.actor,
      action: 'record.imported',
      target: run.id,
      detail: { lines: run.lines, refused: run.refused, committed: false, atomic: !!run.atomic, interrupted: true },
    });
  }
  return marked;
}

/** What became of an import, from its stored row: the console and `wsops imports` say the same. */
export type ImportState = 'running' | 'interrupted' | 'failed' | 'dry_run' | 'not_written' | 'imported';

export function importStateOf(row: {
  finished_at: string | null;
  dry_run: number;
  report: { interrupted?: boolean; failure?: string; committed?: boolean };
}): ImportState {
  if (row.report.interrupted) return 'interrupted';
  if (row.report.failure) return 'failed';
  if (!row.finished_at) return 'running';
  if (row.dry_run) return 'dry_run';
  if (row.report.committed === false) return 'not_written';
  return 'imported';
}

/** The workspace's latest imports, newest first, those whose process is gone marked interrupted first. */
export async function recentImports(db: Kysely<DB>, workspaceId: string, now: number, limit: number) {
  await markInterruptedImports(db, workspaceId, now);
  const rows = await db
    .selectFrom('record_imports')
    .select(['id', 'actor', 'started_at', 'finished_at', 'dry_run', 'atomic', 'lines', 'refused', 'report'])
    .where('workspace_id', '=', workspaceId)
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => {
    const report = JSON.parse(r.report || '{}') as StoredImportReport;
    return { ...r, report, state: importStateOf({ ...r, report }) };
  });
}

/** What a stored report holds (the import's report, or what its batches had committed). */
export interface StoredImportReport {
  interrupted?: boolean;
  failure?: string;
  committed?: boolean;
  counts?: Record<
    string,
    { upsert: { created: number; updated: number; unchanged: number }; delete: { deleted: number; absent: number }; refused: number }
  >;
  refused?: { line: number; pointer: string; code: string; detail: string }[];
}
