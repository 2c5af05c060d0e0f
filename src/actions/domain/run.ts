/**
 * The frame every domain action runs in: argument parsing from one spec (CLI and internal API
 * alike), one transaction per action holding the register writes, the audit entry and the
 * events (transactional outbox), and the helpers actions use to read, write and emit.
 */
import type { Kysely } from 'kysely';
import { recordAudit } from '../../audit/audit.js';
import type { Clock } from '../../clock.js';
import { AppError } from '../../errors.js';
import { parseInstant } from '../../read/timestamp.js';
import type { Register } from '../../registers/define.js';
import { ID_PATTERN_BODY } from '../../registers/fields.js';
import { assertValidRecord } from '../../registers/validate.js';
import type { Database } from '../../store/database.js';
import type { DB } from '../../store/schema.js';
import { emitEvent } from '../../webhooks/outbox.js';
import { getWorkspace } from '../../workspaces/workspaces.js';
import { nextStamp } from '../../writes/next-stamp.js';
import type { RecordObject, RecordStore } from '../../writes/records.js';
import type { ActionArgs, ActionContext, ActionResult, DomainAction, OptionSpec, RunOptions } from './types.js';

/** What this file takes of the services built at start (services.ts). */
export interface RunServices {
  database: Database;
  records: RecordStore;
  clock: Clock;
}

/** How an argument is named in messages: `--expected-return` on the CLI, `expected_return` in the API. */
export function argLabel(option: OptionSpec | string, actor: RunOptions['actor']): string {
  const name = typeof option === 'string' ? option : option.name;
  return actor === 'operator' ? name : `--${name.replace(/_/g, '-')}`;
}

function invalid(option: OptionSpec, actor: RunOptions['actor'], message: string): AppError {
  return new AppError('invalid_parameter', `${argLabel(option, actor)} ${message}`, { param: option.name });
}

function parseOne(option: OptionSpec, raw: unknown, actor: RunOptions['actor']): string | number {
  switch (option.kind) {
    case 'id': {
      const pattern = new RegExp(`^${option.prefix}_${ID_PATTERN_BODY}$`);
      if (typeof raw !== 'string' || !pattern.test(raw)) throw invalid(option, actor, `must be an id of the form ${option.prefix}_...`);
      return raw;
    }
    case 'timestamp': {
      const ms = typeof raw === 'string' ? parseInstant(raw) : undefined;
      if (ms === undefined) throw invalid(option, actor, 'must be an ISO 8601 instant with an offset, e.g. 2026-12-01T17:00:00Z');
      return new Date(ms).toISOString();
    }
    case 'choice': {
      const choices = option.choices ?? [];
      const value = typeof raw === 'string' ? raw.toLowerCase() : undefined;
      if (value === undefined || !choices.includes(value)) throw invalid(option, actor, `must be one of ${choices.join(', ')}`);
      return value;
    }
    case 'integer': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
      const min = option.min ?? Number.MIN_SAFE_INTEGER;
      const max = option.max ?? Number.MAX_SAFE_INTEGER;
      if (!Number.isInteger(n) || n < min || n > max) throw invalid(option, actor, `must be a whole number from ${min} to ${max}`);
      return n;
    }
  }
}

/** Parses raw arguments against an action's spec: unknown names, missing and malformed values are refused. */
export function parseArgs(options: readonly OptionSpec[], raw: Readonly<Record<string, unknown>>, actor: RunOptions['actor']): ActionArgs {
  for (const name of Object.keys(raw)) {
    if (!options.some((o) => o.name === name)) {
      const accepted = options.map((o) => argLabel(o, actor)).join(', ');
      const shown = name.length > 60 ? `${name.slice(0, 60)}…` : name;
      throw new AppError('unknown_parameter', `unknown argument "${argLabel(shown, actor)}"; this action takes: ${accepted}`, {
        param: shown,
      });
    }
  }
  const args: Record<string, string | number | undefined> = {};
  for (const option of options) {
    const value = raw[option.name];
    if (value === undefined || value === null) {
      if (option.required) throw invalid(option, actor, 'is required');
      continue;
    }
    args[option.name] = parseOne(option, value, actor);
  }
  return args;
}

/** A required argument (the spec guarantees it once parsed). */
export function req(args: ActionArgs, name: string): string {
  const v = args[name];
  if (typeof v !== 'string') throw new AppError('invalid_parameter', `${name} is required`, { param: name });
  return v;
}

export function opt(args: ActionArgs, name: string): string | undefined {
  const v = args[name];
  return typeof v === 'string' ? v : undefined;
}

/** The refusal of an action that does not fit the record's state: says why, changes nothing. */
export function refuse(message: string): AppError {
  return new AppError('invalid_state', message);
}

/** Copies a record with its fields in declaration order, as the API returns it. */
function asStored(register: Register, record: RecordObject): RecordObject {
  const out: RecordObject = {};
  for (const name of Object.keys(register.allFields)) out[name] = record[name] ?? null;
  return out;
}

/**
 * Serializes domain actions per workspace. PostgreSQL: a transaction-scoped advisory lock, so
 * two API nodes or a CLI and a node cannot interleave read-check-write on the same records.
 * SQLite: the first statement of the transaction is a write (the audit entry), which takes the
 * database's write lock before anything is read, so no other process writes in between.
 */
function lockWorkspace(services: RunServices, trx: Kysely<DB>, workspaceId: string): Promise<void> {
  return services.database.engine.serialize(trx, `wsops.actions:${workspaceId}`);
}

export async function runDomainAction(
  services: RunServices,
  name: string,
  action: DomainAction,
  workspaceId: string,
  rawArgs: Readonly<Record<string, unknown>>,
  options: RunOptions = {},
): Promise<ActionResult> {
  const actor = options.actor ?? 'cli';
  const args = parseArgs(action.options, rawArgs, actor);
  return services.database.db.transaction().execute(async (trx) => {
    await lockWorkspace(services, trx, workspaceId);
    const now = services.clock();
    const nowIso = new Date(now).toISOString();
    await recordAudit(trx, {
      workspaceId,
      at: nowIso,
      actor,
      action: `action.${name}`,
      target: action.target(args),
      detail: { args },
    });
    const workspace = await getWorkspace(trx, workspaceId);
    if (!workspace.modules.includes(action.module)) {
      throw new AppError('not_found', `${name} needs the ${action.module} module, which is not installed in workspace ${workspaceId}`);
    }
    const changed = new Map<string, RecordObject>();
    const events: string[] = [];
    const find = (register: Register, id: string) => services.records.get(workspaceId, register, id, trx);
    const ctx: ActionContext = {
      services,
      trx,
      workspaceId,
      now,
      nowIso,
      find,
      async load(register, id, role) {
        const record = await find(register, id);
        if (!record) throw new AppError('not_found', `no ${role ?? register.resource} ${id} in workspace ${workspaceId}`);
        return record;
      },
      async query(register, { statuses, mention }, where) {
        let q = trx.selectFrom('records').select('doc').where('workspace_id', '=', workspaceId).where('register', '=', register.path);
        if (statuses) q = q.where('status', 'in', [...statuses]);
        // A prefilter only (LIKE's `_` matches any character): `where` decides.
        if (mention) q = q.where('doc', 'like', `%"${mention}"%`);
        const rows = await q.orderBy('id').execute();
        return rows.map((r) => JSON.parse(r.doc) as RecordObject).filter(where);
      },
      async write(register, next) {
        const id = next.id as string;
        const again = changed.get(id);
        const previous = again ?? (await find(register, id));
        // Written twice in one action: its first new stamp stands.
        const updatedAt = again ? (again.updated_at as string) : previous ? nextStamp(previous.updated_at as string, now) : nowIso;
        const stamped = register.withDerived({
          ...next,
          created_at: previous?.created_at ?? next.created_at ?? nowIso,
          updated_at: updatedAt,
        });
        const stored = asStored(register, stamped);
        try {
          assertValidRecord(register, stored);
        } catch (err) {
          // The stored record itself is off (the action only sets valid values): say which, and how to fix it.
          const why = err instanceof Error ? err.message : String(err);
          throw new AppError(
            'invalid_state',
            `${register.resource} ${id} would not be valid after this action (${why}); fix it with wsops correct`,
          );
        }
        await services.records.put(workspaceId, register, stored, trx);
        changed.set(stored.id as string, stored);
        return stored;
      },
      async emit(type, data) {
        const event = await emitEvent(trx, workspaceId, type, data, now);
        events.push(event.id);
        return event.id;
      },
    };
    await action.apply(ctx, args);
    return { records: [...changed.values()], events };
  });
}
