/**
 * The frame every domain action runs in: argument parsing from one spec (CLI and internal API
 * alike), one transaction per action holding the register writes, the audit entry and the
 * events (transactional outbox), and the helpers actions use to read, write and emit.
 */
import { auditRow } from '../../audit/audit.js';
import type { Clock } from '../../clock.js';
import { AppError } from '../../errors.js';
import { parseInstant } from '../../read/timestamp.js';
import type { Register } from '../../registers/define.js';
import { ID_PATTERN_BODY } from '../../registers/fields.js';
import { assertValidRecord } from '../../registers/validate.js';
import type { ActionStatements, Database } from '../../store/database.js';
import type { DB } from '../../store/schema.js';
import { compileFilter } from '../../webhooks/events/event-filter.js';
import { fanOut, newEvent, type Receiver } from '../../webhooks/events/outbox.js';
import { workspaceModules } from '../../workspaces/workspaces.js';
import { nextStamp } from '../../writes/next-stamp.js';
import { type RecordObject, type RecordStore, toRow } from '../../writes/records.js';
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

/** PostgreSQL's deadlock_detected: two actions took the same rows' locks in opposite orders. */
const DEADLOCK = '40P01';
/** Runs of one action at most when PostgreSQL ends it as a deadlock's victim (each rolled back whole). */
const DEADLOCK_RUNS = 3;

function isDeadlock(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === DEADLOCK;
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
  for (let run = 1; ; run++) {
    try {
      return await runOnce(services, name, action, workspaceId, args, actor);
    } catch (err) {
      // The victim's transaction was rolled back whole: running it again is safe.
      if (!isDeadlock(err) || run >= DEADLOCK_RUNS) throw err;
    }
  }
}

/**
 * One run of an action in one transaction. Every record it reads is locked for the rest of the
 * transaction (FOR UPDATE on PostgreSQL; on SQLite BEGIN IMMEDIATE already holds the database's
 * write lock): two actions that read a record run one after the other, actions on other records
 * at once (ADR 42). Read Committed reads what committed before each statement, so an action that
 * waited for a lock reads the other action's result after it.
 */
function runOnce(
  services: RunServices,
  name: string,
  action: DomainAction,
  workspaceId: string,
  args: ActionArgs,
  actor: NonNullable<RunOptions['actor']>,
): Promise<ActionResult> {
  return services.database.db.transaction().execute(async (trx) => {
    // Prepared once per connection: an action builds no query (ADR 42).
    const statements = services.database.engine.actionStatements(trx, workspaceId);
    const now = services.clock();
    const nowIso = new Date(now).toISOString();
    /** The events emitted, written with the audit entry at the end (one statement on PostgreSQL). */
    const emitted: DB['events'][] = [];
    const changed = new Map<string, RecordObject>();
    /** Records read (and locked) in this transaction, as last read or written; undefined: none has the id. */
    const seen = new Map<string, RecordObject | undefined>();
    const key = (register: Register, id: string) => `${register.path}/${id}`;
    /** Keys of records locked for update; the others of `seen` are locked shared (read to check). */
    const forUpdate = new Set<string>();
    const read = async (register: Register, id: string, shared: boolean): Promise<RecordObject | undefined> => {
      const k = key(register, id);
      if (seen.has(k) && (shared || forUpdate.has(k))) return seen.get(k);
      const doc = await statements.record(register.path, id, shared ? 'share' : 'update');
      const record = doc === undefined ? undefined : (JSON.parse(doc) as RecordObject);
      seen.set(k, record);
      if (!shared) forUpdate.add(k);
      return record;
    };
    const find = (register: Register, id: string) => read(register, id, false);
    const ctx: ActionContext = {
      services,
      workspaceId,
      now,
      nowIso,
      find,
      async load(register, id, role, mode = 'write') {
        const record = await read(register, id, mode === 'check');
        if (!record) throw new AppError('not_found', `no ${role ?? register.resource} ${id} in workspace ${workspaceId}`);
        return record;
      },
      async query(register, { statuses, naming, mention }, where) {
        const docs = naming
          ? await statements.naming(register.idPrefix, naming, statuses ?? null)
          : await statements.matching(register.path, statuses ?? null, mention === undefined ? null : `"${mention}"`);
        const records = docs.map((doc) => JSON.parse(doc) as RecordObject);
        // Sorted here, not by ORDER BY id: SQLite then planned the whole workspace in id order
        // (its primary key) instead of the status index, a cost that grows with the workspace (ADR 42).
        records.sort((a, b) => ((a.id as string) < (b.id as string) ? -1 : 1));
        for (const record of records) {
          seen.set(key(register, record.id as string), record);
          forUpdate.add(key(register, record.id as string));
        }
        return records.filter(where);
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
        await statements.put(toRow(workspaceId, register, stored), previous !== undefined);
        changed.set(stored.id as string, stored);
        seen.set(key(register, id), stored);
        return stored;
      },
      async emit(type, data) {
        const event = newEvent(workspaceId, type, data, now);
        emitted.push(event);
        return event.id;
      },
    };
    try {
      await action.apply(ctx, args);
    } catch (err) {
      // A missing module (or workspace) is the answer, whatever the action made of the records. Only
      // after a refusal: after a database error (a deadlock) the transaction takes no more statements.
      if (err instanceof AppError) await moduleInstalled(statements, workspaceId, name, action.module);
      throw err;
    }
    // The module check and the endpoints the events fan out to, in one statement.
    const endpoints = await moduleInstalled(statements, workspaceId, name, action.module);
    const audit = auditRow({ workspaceId, at: nowIso, actor, action: `action.${name}`, target: action.target(args), detail: { args } });
    await statements.append(audit, emitted, fanOut(endpoints, emitted));
    return { records: [...changed.values()], events: emitted.map((e) => e.id) };
  });
}

/**
 * Refuses an action whose module is not installed in the workspace (or no such workspace);
 * returns the endpoints its events are written for (active, or holding them), read in the same statement.
 */
async function moduleInstalled(statements: ActionStatements, workspaceId: string, name: string, module: string): Promise<Receiver[]> {
  const rows = await statements.workspace();
  const first = rows[0];
  if (!first) throw new AppError('not_found', `no workspace ${workspaceId}; list them with: wsops workspace list`);
  if (!workspaceModules(first.modules).includes(module)) {
    throw new AppError('not_found', `${name} needs the ${module} module, which is not installed in workspace ${workspaceId}`);
  }
  return rows.flatMap((r) =>
    r.id === null || r.events === null || r.scopes === null
      ? []
      : [{ id: r.id, events: r.events, scopes: r.scopes, held: Number(r.held) === 1, filter: compileFilter(r.filter) }],
  );
}
