import type { Kysely } from '#kysely';
import { recordAudit } from '../audit/audit.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { splitList } from '../lists.js';
import { ALWAYS_INSTALLED, MODULES, OPTIONAL_MODULES } from '../registers/define.js';
import type { Adapter, Database } from '../store/database.js';
import type { DB } from '../store/schema.js';
import { refuseUnsafeName } from '../text-rules.js';

export interface Workspace {
  id: string;
  name: string;
  modules: string[];
  created_at: string;
}

/** Parses `all` or `m1,m2` into optional module names; always-installed ones are implied. */
export function parseModules(spec: string): string[] {
  if (spec.trim() === 'all') return [...OPTIONAL_MODULES];
  const names = splitList(spec);
  for (const n of names) {
    if (!MODULES.includes(n)) {
      throw new AppError('invalid_parameter', `unknown module "${n}"; modules are: ${MODULES.join(', ')}`);
    }
  }
  return [...new Set(names.filter((n) => (OPTIONAL_MODULES as readonly string[]).includes(n)))];
}

/** The modules of a workspace from its stored `modules` column, the ones always installed included. */
export function workspaceModules(stored: string): string[] {
  return [...ALWAYS_INSTALLED, ...stored.split(' ').filter(Boolean)];
}

function toWorkspace(row: DB['workspaces']): Workspace {
  return {
    id: row.id,
    name: row.name,
    modules: workspaceModules(row.modules),
    created_at: row.created_at,
  };
}

export async function createWorkspace(db: Kysely<DB>, name: string, modules: string[], now: string): Promise<Workspace> {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > 200) {
    throw new AppError('invalid_parameter', 'workspace name must be 1 to 200 characters');
  }
  refuseUnsafeName(trimmed, 'the workspace name', 'name');
  const row = { id: newId('wsp'), name: trimmed, modules: modules.join(' '), created_at: now };
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('workspaces').values(row).execute();
    await recordAudit(trx, { workspaceId: row.id, at: now, actor: 'cli', action: 'workspace.created', detail: { name: trimmed, modules } });
  });
  return toWorkspace(row);
}

async function workspaceRow(db: Kysely<DB>, id: string): Promise<DB['workspaces']> {
  const row = await db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new AppError('not_found', `no workspace ${id}; list them with: wsops workspace list`);
  return row;
}

export async function getWorkspace(db: Kysely<DB>, id: string): Promise<Workspace> {
  return toWorkspace(await workspaceRow(db, id));
}

/** What a write that locks a workspace takes: the query builder and the dialect's SQL for the lock. */
export type LockingDatabase = Pick<Database, 'db' | 'engine'>;

/**
 * Locks a workspace's row for the rest of the transaction, so checks of per-workspace limits
 * (keys, endpoints) cannot be passed by two concurrent writers at once. SQLite transactions
 * already hold the database's write lock (BEGIN IMMEDIATE).
 */
export async function lockWorkspace(trx: Kysely<DB>, adapter: Pick<Adapter, 'lockRows'>, workspaceId: string): Promise<void> {
  const q = adapter.lockRows(trx.selectFrom('workspaces').select('id').where('id', '=', workspaceId));
  if (!(await q.executeTakeFirst())) throw new AppError('not_found', `no workspace ${workspaceId}; list them with: wsops workspace list`);
}

export async function listWorkspaces(db: Kysely<DB>): Promise<Workspace[]> {
  const rows = await db.selectFrom('workspaces').selectAll().orderBy('created_at').execute();
  return rows.map(toWorkspace);
}

export async function setModule(
  db: Kysely<DB>,
  workspaceId: string,
  module: string,
  installed: boolean,
  now: string,
  actor = 'cli',
): Promise<Workspace> {
  if (!MODULES.includes(module)) {
    throw new AppError('invalid_parameter', `unknown module "${module}"; modules are: ${MODULES.join(', ')}`);
  }
  if ((ALWAYS_INSTALLED as readonly string[]).includes(module)) {
    throw new AppError(
      'invalid_parameter',
      `module "${module}" is always installed and cannot be ${installed ? 'installed' : 'uninstalled'}`,
    );
  }
  return db.transaction().execute(async (trx) => {
    let ws: Workspace;
    let modules: string[];
    // Written only over the list it was computed from, else read again: two installs at once
    // (several API processes) would otherwise each write their list and lose the other's module.
    for (;;) {
      const row = await workspaceRow(trx, workspaceId);
      ws = toWorkspace(row);
      const optional = new Set(ws.modules.filter((m) => (OPTIONAL_MODULES as readonly string[]).includes(m)));
      if (installed) optional.add(module);
      else optional.delete(module);
      modules = OPTIONAL_MODULES.filter((m) => optional.has(m));
      const written = await trx
        .updateTable('workspaces')
        .set({ modules: modules.join(' ') })
        .where('id', '=', workspaceId)
        .where('modules', '=', row.modules)
        .executeTakeFirst();
      if (Number(written.numUpdatedRows) === 1) break;
    }
    await recordAudit(trx, {
      workspaceId,
      at: now,
      actor,
      action: installed ? 'module.installed' : 'module.uninstalled',
      target: module,
    });
    return { ...ws, modules: [...ALWAYS_INSTALLED, ...modules] };
  });
}
