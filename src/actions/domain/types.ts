import type { Clock } from '../../clock.js';
import type { Register } from '../../registers/define.js';
import type { Database } from '../../store/database.js';
import type { EventType } from '../../webhooks/events/event-types.js';
import type { RecordObject, RecordStore } from '../../writes/records.js';

/** What this file takes of the services built at start (services.ts). */
export interface ActionServices {
  database: Database;
  records: RecordStore;
  clock: Clock;
}

/**
 * One argument of a domain action. The same spec drives the CLI (`--expected-return <iso>`)
 * and the internal HTTP API (`"expected_return": "..."`), and parses both.
 */
export interface OptionSpec {
  /** snake_case name: the HTTP body field; the CLI flag is the same name in kebab-case. */
  name: string;
  /** Placeholder of the CLI flag's value (`<id>`). */
  placeholder: string;
  description: string;
  required?: boolean;
  kind: 'id' | 'timestamp' | 'choice' | 'integer';
  /** Id prefix, for `id` arguments. */
  prefix?: string;
  /** Accepted values (lowercase), for `choice` arguments. */
  choices?: readonly string[];
  /** Inclusive bounds, for `integer` arguments. */
  min?: number;
  max?: number;
}

/** Parsed arguments: ids and choices as strings (choices lowercased), timestamps normalized, integers as numbers. */
export type ActionArgs = Readonly<Record<string, string | number | undefined>>;

export interface ActionResult {
  /** Every record the action wrote, as the API returns it, in the order first written. */
  records: RecordObject[];
  /** Ids of the events the action emitted. */
  events: string[];
}

/** What an action's body works with: everything runs inside the action's one transaction. */
export interface ActionContext {
  readonly services: ActionServices;
  readonly workspaceId: string;
  /** The action's instant (epoch ms) and its ISO form; one value for the whole action. */
  readonly now: number;
  readonly nowIso: string;
  /**
   * A record, or a `not_found` refusal naming what was looked for. Locked until the action ends:
   * for update (`write`, the default), or shared (`check`: a record the action only reads to check
   * and never writes, such as the person an asset goes to; concurrent actions checking it run at
   * once, one that writes it waits).
   */
  load(register: Register, id: string, role?: string, mode?: 'write' | 'check'): Promise<RecordObject>;
  /** A record, or undefined. */
  find(register: Register, id: string): Promise<RecordObject | undefined>;
  /**
   * Records of a register whose indexed status is one of `statuses` (any when omitted), whose
   * reference fields name the id `naming` (when given), and whose stored JSON contains `mention`
   * (a prefilter for fields that are not references), that satisfy `where`.
   */
  query(
    register: Register,
    options: { statuses?: readonly string[]; naming?: string; mention?: string },
    where: (record: RecordObject) => boolean,
  ): Promise<RecordObject[]>;
  /**
   * Writes `next` (an existing record changed, or a new one): stamps `updated_at` after the
   * previous value, recomputes derived fields, validates against the declaration. Returns it as stored.
   */
  write(register: Register, next: RecordObject): Promise<RecordObject>;
  /** Emits an event in the same transaction; its id is part of the result. */
  emit(type: EventType, data: unknown): Promise<string>;
}

export interface DomainAction {
  /** The module whose register the action acts on; the action is refused while it is uninstalled. */
  module: string;
  description: string;
  options: readonly OptionSpec[];
  /** The id of the record the action is about (for the audit trail). */
  target(args: ActionArgs): string;
  /** The action's body: reads, checks the state (refusing with `invalid_state`), writes and emits. */
  apply(ctx: ActionContext, args: ActionArgs): Promise<void>;
}

/** Who runs an action, for the audit trail. */
export interface RunOptions {
  actor?: 'cli' | 'operator';
}

/** One entry of the ACTIONS table: what the CLI and the internal API call. */
export interface ActionEntry {
  name: string;
  description: string;
  options: readonly OptionSpec[];
  /** Parses raw arguments (CLI strings, JSON values) and runs the action in one transaction. */
  run(services: ActionServices, workspaceId: string, args: Readonly<Record<string, unknown>>, options?: RunOptions): Promise<ActionResult>;
}
