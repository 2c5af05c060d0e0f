/**
 * Bulk import of NDJSON operations (`{"register", "op": "upsert", "record"}` or
 * `{"register", "op": "delete", "id"}`), streamed: lines are read a batch at a time and each batch
 * is applied in its own short transaction, never while waiting on the client (ADR 20).
 *
 * References: a record may name a record that comes later in the same import. Such a record
 * waits (bounded) until what it names has been written, and is written then; whatever still
 * waits at the end is written if it names only other waiting records (a cycle of managers),
 * and refused with its line otherwise.
 *
 * `atomic`: the whole import is one all-or-nothing transaction, read whole first (at most
 * ATOMIC_MAX_LINES lines) so that the transaction never waits on the client either.
 * `dryRun`: everything is checked, nothing is written.
 */

import { recordAudit } from '../audit/audit.js';
import type { Clock } from '../clock.js';
import { AppError } from '../errors.js';
import { randomBase62 } from '../ids.js';
import { REGISTERS, registerByPath } from '../registers/catalogue.js';
import type { Register } from '../registers/define.js';
import { idPattern, idRule } from '../registers/fields.js';
import { clip, type FieldProblemCode, type RecordObject, readRecordInput } from '../registers/record-input.js';
import type { Database } from '../store/database.js';
import { type ImportProgress, isDeadlock, nextSlice, type RecordBatch, type StoredRecord, sliceUsed } from '../store/record-batches.js';
import type { RecordsTable } from '../store/schema.js';
import { storageFaultOf } from '../store/storage-faults.js';
import { mayNamePrototype, prototypeKeyIn } from '../text-rules.js';
import { getWorkspace } from '../workspaces/workspaces.js';
import { FirstLines } from './first-lines.js';
import { HEARTBEAT_MS, THIS_PROCESS } from './import-runs.js';
import { type Line, ndjsonLines } from './ndjson-lines.js';
import { PendingReferences } from './pending-references.js';
import { changeOf, danglingProblem, knownReferences, referenceKey, referencesIn } from './record-changes.js';
import { type RowParts, rowParts } from './records.js';
import { fieldOf, groupReferrers, type Referrer, type ReferrerGroup, referencedDetail, storedReferrers } from './referrers.js';

/** What this file takes of the services built at start (services.ts). */
export interface ImportServices {
  database: Database;
  clock: Clock;
}

/** The longest line accepted (a record with long lists of nested items fits easily). */
export const MAX_LINE_BYTES = 1024 * 1024;
/** An atomic import is read whole before its one transaction: at most this many lines. */
export const ATOMIC_MAX_LINES = 100_000;
/** Records waiting for a reference written later in the same import, at most. */
export const MAX_WAITING = 100_000;
/** Refused lines reported in full (all are counted); repeated ids likewise. */
export const MAX_REPORTED_REFUSALS = 1000;
/** Distinct ids of one file remembered to report an id written twice (bounds the memory a huge file costs). */
export const MAX_TRACKED_IDS = 1_000_000;

export interface ImportOptions {
  actor: string;
  atomic?: boolean;
  dryRun?: boolean;
  /** Keep each record's created_at/updated_at as given (moving a workspace; see README). */
  keepTimestamps?: boolean;
  /** Called after each batch: lines read so far, refused so far. */
  onProgress?: (p: { lines: number; refused: number }) => void;
}

export interface RegisterCounts {
  upsert: { created: number; updated: number; unchanged: number };
  delete: { deleted: number; absent: number };
  refused: number;
}

export interface RefusedLine {
  line: number;
  pointer: string;
  code: FieldProblemCode;
  detail: string;
  /** A refused delete (`referenced`): the records that still name it, per register and field. */
  referrers?: ReferrerGroup[];
}

/** An upsert of an id an earlier line of the same file already wrote: applied, the last line wins. */
export interface RepeatedId {
  line: number;
  first_line: number;
  register: string;
  id: string;
  detail: string;
}

export interface ImportReport {
  id: string;
  workspace_id: string;
  dry_run: boolean;
  atomic: boolean;
  keep_timestamps: boolean;
  /** false for a dry run, and for an atomic import with any refused line. */
  committed: boolean;
  lines: number;
  counts: Record<string, RegisterCounts>;
  refused_count: number;
  refused: RefusedLine[];
  refused_truncated: boolean;
  /** Ids written by more than one upsert line: each later line is applied and replaces the earlier (the last line wins). */
  repeated_count: number;
  repeated: RepeatedId[];
  started_at: string;
  finished_at: string;
}

type Op =
  | {
      line: number;
      register: Register;
      kind: 'upsert';
      id: string;
      /** The checked record (its stamps only when they are kept). */
      record: RecordObject;
      /**
       * Its row without stamps, built as the line is read (on PostgreSQL, while the previous batch
       * is written). A dry run leaves it out: it needs a row only to compare with a stored one.
       */
      parts?: RowParts;
      refs: { pointer: string; id: string }[];
    }
  | { line: number; register: Register; kind: 'delete'; id: string };
type Upsert = Extract<Op, { kind: 'upsert' }>;

const TOP_KEYS = new Set(['register', 'op', 'record', 'id']);

/**
 * One line to an operation, or every reason it is refused (a line with two faults names both).
 * `buildRow`: build the record's row parts now (an import that writes needs them for every line).
 */
export function parseOperation(line: number, text: string, keepTimestamps: boolean, buildRow = true): Op | RefusedLine[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return [{ line, pointer: '', code: 'invalid_json', detail: `is not JSON (${(err as Error).message.slice(0, 100)})` }];
  }
  const refuse = (pointer: string, code: FieldProblemCode, detail: string): RefusedLine[] => [{ line, pointer, code, detail }];
  const hostile = mayNamePrototype(text) ? prototypeKeyIn(value) : undefined;
  if (hostile !== undefined) {
    const code = hostile.startsWith('/record/') ? 'unknown_field' : 'invalid_operation';
    return refuse(
      hostile,
      code,
      'names __proto__, constructor or prototype, which no operation or record has and which is never accepted as a key',
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return refuse(
      '',
      'invalid_operation',
      'must be an object: {"register", "op": "upsert", "record"} or {"register", "op": "delete", "id"}',
    );
  }
  const o = value as RecordObject;
  for (const key of Object.keys(o))
    if (!TOP_KEYS.has(key)) return refuse(`/${key}`, 'invalid_operation', 'is not a member of an operation (register, op, record, id)');
  const register = typeof o.register === 'string' ? registerByPath(o.register) : undefined;
  if (!register) {
    return refuse('/register', 'unknown_register', `must be one of ${REGISTERS.map((r) => r.path).join(', ')}; got "${clip(o.register)}"`);
  }
  if (o.op === 'delete') {
    if ('record' in o) return refuse('/record', 'invalid_operation', 'a delete names only its id');
    if (typeof o.id !== 'string' || !idPattern(register.idPrefix).test(o.id)) {
      return refuse('/id', 'invalid_format', `must be an id: ${idRule(register.idPrefix)}`);
    }
    return { line, register, kind: 'delete', id: o.id };
  }
  if (o.op !== 'upsert') return refuse('/op', 'invalid_operation', `must be "upsert" or "delete"; got "${clip(o.op)}"`);
  if ('id' in o) return refuse('/id', 'invalid_operation', 'an upsert carries its id inside record');
  const input = readRecordInput(register, o.record, { keepTimestamps });
  if (!input.ok) return input.problems.map((p) => ({ line, pointer: `/record${p.pointer}`, code: p.code, detail: p.detail }));
  const refs = referencesIn(register, input.record);
  return {
    line,
    register,
    kind: 'upsert',
    id: input.record.id as string,
    record: input.record,
    parts: buildRow ? rowParts(register, input.record, refs) : undefined,
    refs,
  };
}

const isRefused = (x: Op | RefusedLine[]): x is RefusedLine[] => Array.isArray(x);

/** In a dry run's batch state: present, written by this batch, its row not built (Applier.check). */
const UNBUILT: RecordsTable = {
  id: '',
  workspace_id: '',
  register: '',
  created_at: '',
  updated_at: '',
  location_id: null,
  status: null,
  category: null,
  record_type: null,
  search_text: '',
  doc: '',
  refs: '[]',
};

const zeroCounts = (): RegisterCounts => ({
  upsert: { created: 0, updated: 0, unchanged: 0 },
  delete: { deleted: 0, absent: 0 },
  refused: 0,
});

class Report {
  readonly id = `imp_${randomBase62(16)}`;
  lines = 0;
  /** Lines up to the end of the last batch committed: what a stopped import had applied. */
  appliedLines = 0;
  refusedCount = 0;
  readonly refused: RefusedLine[] = [];
  /** Whether a fault was left out of `refused` (over MAX_REPORTED_REFUSALS). */
  truncated = false;
  /** Counts of committed batches only: a batch that fails is not counted as written. */
  readonly counts: Record<string, RegisterCounts> = {};
  repeatedCount = 0;
  readonly repeated: RepeatedId[] = [];
  private readonly firstLines = new FirstLines();

  /** Notes an upsert of `id` at `line`; a repeat of an id the file wrote before is reported with both lines. */
  upserted(register: Register, id: string, line: number): void {
    const first = this.firstLines.get(id);
    if (first === undefined) {
      if (this.firstLines.size < MAX_TRACKED_IDS) this.firstLines.set(id, line);
      return;
    }
    this.repeatedCount++;
    if (this.repeated.length < MAX_REPORTED_REFUSALS) {
      this.repeated.push({
        line,
        first_line: first,
        register: register.path,
        id,
        detail: `${id} is written again (first at line ${first}); line ${line} is applied and replaces it: the last line for an id wins`,
      });
    }
  }
  /**
   * Counts of the batch being checked, added to `counts` once it commits. On PostgreSQL one batch
   * is checked while the one before it is still being written, so each batch takes its own.
   */
  private pending: BatchCounts = {};

  /** The counts the batch being checked adds to. */
  of(register: Register): RegisterCounts {
    let c = this.pending[register.path];
    if (!c) {
      c = zeroCounts();
      this.pending[register.path] = c;
    }
    return c;
  }

  /** The counts of the batch checked so far (atomic: the whole import). */
  pendingCounts(): BatchCounts {
    return this.pending;
  }

  /** The counts of the batch checked so far, handed to that batch (the next one starts from zero). */
  takePending(): BatchCounts {
    const p = this.pending;
    this.pending = {};
    return p;
  }

  private committedOf(path: string): RegisterCounts {
    let c = this.counts[path];
    if (!c) {
      c = zeroCounts();
      this.counts[path] = c;
    }
    return c;
  }

  /** The committed counts with a batch's added (what the batch's own transaction records). */
  countsWith(batch: BatchCounts): Record<string, RegisterCounts> {
    const all: Record<string, RegisterCounts> = structuredClone(this.counts);
    for (const [path, p] of Object.entries(batch)) {
      const c = all[path] ?? zeroCounts();
      all[path] = c;
      addCounts(c, p);
    }
    return all;
  }

  /** A batch committed, up to line `lines`. */
  commit(batch: BatchCounts, lines: number): void {
    for (const [path, p] of Object.entries(batch)) addCounts(this.committedOf(path), p);
    this.appliedLines = Math.max(this.appliedLines, lines);
  }

  /** One refused line, with each of its faults (one entry in `refused` per fault). */
  refuse(r: RefusedLine | RefusedLine[], register?: Register): void {
    this.refusedCount++;
    if (register) this.committedOf(register.path).refused++;
    for (const fault of Array.isArray(r) ? r : [r]) {
      if (this.refused.length < MAX_REPORTED_REFUSALS) this.refused.push(fault);
      else this.truncated = true;
    }
  }
}

/** One batch's counts by register path. */
type BatchCounts = Record<string, RegisterCounts>;

function addCounts(into: RegisterCounts, add: RegisterCounts): void {
  into.upsert.created += add.upsert.created;
  into.upsert.updated += add.upsert.updated;
  into.upsert.unchanged += add.upsert.unchanged;
  into.delete.deleted += add.delete.deleted;
  into.delete.absent += add.delete.absent;
  into.refused += add.refused;
}

/** A checked batch: what its transaction writes, and what it counts once committed. */
interface Checked {
  upserts: RecordsTable[];
  /** Ids of `upserts` absent when the batch read them. */
  created: ReadonlySet<string>;
  deletes: string[];
  now: number;
  /** Every id the batch read: its row after the batch, or null if absent. */
  state: ReadonlyMap<string, StoredRecord | null>;
  /**
   * Records the batch names that the previous batch wrote and had not committed when this one
   * was checked: they could not be locked then, so they are locked once it has committed.
   */
  namedUnsettled: string[];
}

/** A checked batch whose transaction is still open: its rows are invisible to the next one. */
interface Unsettled {
  state: Checked['state'];
  deletes: boolean;
  /** Settles when it commits (or fails). */
  committed: Promise<void>;
}

/**
 * The state of one import across its batches: which records wait for a reference, and the
 * references of the records it changed (a dry run keeps them all, since nothing is written: they
 * also say which ids it would have made present or absent).
 */
class Applier {
  private readonly waiting = new Map<string, { op: Upsert; missing: Set<string> }>();
  private readonly waitersOf = new Map<string, Set<string>>();
  /** Waiting records whose references have all been written: applied with the next batch. */
  private ready: Upsert[] = [];
  private readonly pending = new PendingReferences();

  get hasReady(): boolean {
    return this.ready.length > 0;
  }

  constructor(
    private readonly services: ImportServices,
    private readonly workspaceId: string,
    private readonly report: Report,
    private readonly options: ImportOptions,
  ) {}

  /** Applies a batch of operations (in line order) inside the open transaction `tx`. */
  async apply(tx: RecordBatch, incoming: readonly Op[], trusted: ReadonlySet<Upsert> = new Set()): Promise<void> {
    await this.write(tx, await this.check(tx, incoming, trusted));
  }

  /**
   * Checks a batch of operations (in line order) inside the open transaction `tx`, and returns
   * what it writes. `before`: the previous batch, checked but perhaps not yet committed (its
   * rows are then invisible to `tx`). What it made present counts as present; a batch that
   * deletes, or shares an id with it, or follows one that deletes, waits for its commit first
   * (the stored referrers, the locked rows and the counts are then the database's own).
   */
  async check(tx: RecordBatch, incoming: readonly Op[], trusted: ReadonlySet<Upsert> = new Set(), before?: Unsettled): Promise<Checked> {
    const dryRun = !!this.options.dryRun;
    const ops: Op[] = [...this.ready, ...incoming];
    this.ready = [];
    const ids = new Set(ops.map((o) => o.id));
    let unsettled = before;
    if (before && (before.deletes || ops.some((o) => o.kind === 'delete' || before.state.has(o.id)))) {
      await before.committed;
      unsettled = undefined;
    }
    const madePresent = (id: string) => !!unsettled?.state.get(id);
    // Written batches are in the database; a dry run's changes never are.
    if (!dryRun) this.pending.clear();
    // A batch that deletes locks its rows as a delete (no write may name them meanwhile), the
    // others as writes, which leave writes naming them free (ADR 43, "Under concurrency").
    const stored = await tx.current(this.workspaceId, [...ids], ops.some((o) => o.kind === 'delete') ? 'delete' : 'write');
    // Present now (in this batch's view): id -> the stored row, or null once deleted.
    const state = new Map<string, StoredRecord | null>();
    for (const id of ids) {
      const sim = this.pending.changed(id);
      // A dry run's simulated record has no stored text: it counts as present, and is never "unchanged".
      state.set(
        id,
        sim === false ? null : (stored.get(id) ?? (sim ? { id, register: '', created_at: '', updated_at: '', doc: '' } : null)),
      );
    }
    const refIds = new Set<string>();
    for (const op of ops)
      if (op.kind === 'upsert')
        for (const r of op.refs) if (!ids.has(r.id) && this.pending.changed(r.id) === undefined && !madePresent(r.id)) refIds.add(r.id);
    const inDatabase = refIds.size ? await tx.existing(this.workspaceId, [...refIds]) : new Set<string>();
    const namedUnsettled = new Set<string>();
    for (const op of ops)
      if (op.kind === 'upsert')
        for (const r of op.refs)
          if (!ids.has(r.id) && this.pending.changed(r.id) === undefined && madePresent(r.id)) namedUnsettled.add(r.id);
    const present = (id: string) =>
      state.has(id) ? state.get(id) !== null : (this.pending.changed(id) ?? (madePresent(id) || inDatabase.has(id)));
    // Who names what this batch deletes: one query, and only for a batch that deletes.
    const deleting = ops.filter((o) => o.kind === 'delete').map((o) => o.id);
    const namedInDatabase = deleting.length ? await storedReferrers(tx, this.workspaceId, deleting) : undefined;
    const tracking = namedInDatabase !== undefined || dryRun;

    const now = this.services.clock();
    const written = new Map<string, ReturnType<typeof changeOf>['row'] | null>();
    /** A dry run's records new to this batch (UNBUILT in `state`): their rows, built only if a later line compares with them. */
    const unbuilt = new Map<string, Upsert>();
    const rowFor = (op: Upsert, current: StoredRecord | undefined) =>
      changeOf(
        this.workspaceId,
        op.register,
        op.record,
        current,
        now,
        this.options.keepTimestamps,
        op.parts ?? rowParts(op.register, op.record, op.refs),
      );
    for (const op of ops) {
      if (sliceUsed()) await nextSlice();
      const counts = this.report.of(op.register);
      this.supersede(op.id, counts);
      let current = state.get(op.id);
      if (current === UNBUILT) {
        current = rowFor(unbuilt.get(op.id) as Upsert, undefined).row;
        state.set(op.id, current);
      }
      if (op.kind === 'delete') {
        if (current) {
          const referrers = this.referrersOf(op.id, namedInDatabase);
          if (referrers.length) {
            const groups = groupReferrers(referrers);
            this.report.refuse(
              { line: op.line, pointer: '/id', code: 'referenced', detail: referencedDetail(op.id, groups), referrers: groups },
              op.register,
            );
            continue;
          }
          this.pending.set(op.id, null);
          counts.delete.deleted++;
          state.set(op.id, null);
          written.set(op.id, null);
        } else counts.delete.absent++;
        continue;
      }
      let missing = trusted.has(op) ? [] : op.refs.filter((r) => !present(r.id));
      if (missing.length && current?.doc) {
        // Judged on what the line changes: a reference the stored record already makes stands.
        const known = knownReferences(op.register, current.doc);
        missing = missing.filter((r) => !known.has(referenceKey(fieldOf(r.pointer), r.id)));
      }
      if (missing.length) {
        this.wait(op, missing);
        continue;
      }
      if (dryRun && !current?.doc) {
        // Nothing stored to compare with: it is written (created, or updated after an earlier
        // batch's line), and its row is not needed unless a later line of this batch repeats it.
        if (current) counts.upsert.updated++;
        else counts.upsert.created++;
        unbuilt.set(op.id, op);
        state.set(op.id, UNBUILT);
        written.set(op.id, UNBUILT);
        if (tracking) this.pending.set(op.id, { register: op.register.path, refs: op.refs });
        continue;
      }
      const change = rowFor(op, current?.doc ? current : undefined);
      if (!change.changed) counts.upsert.unchanged++;
      else if (current) counts.upsert.updated++;
      else counts.upsert.created++;
      if (change.changed) written.set(op.id, change.row);
      // The row holds what a later line for the same id compares with (a StoredRecord's columns).
      state.set(op.id, change.row);
      if (tracking) this.pending.set(op.id, { register: op.register.path, refs: op.refs });
    }
    const upserts = dryRun ? [] : [...written.values()].filter((r) => r !== null);
    const deletes = [...written.entries()].filter(([id, r]) => r === null && stored.has(id)).map(([id]) => id);
    for (const [id, s] of state) if (s !== null) this.resolved(id);
    const created = new Set(upserts.filter((r) => !stored.has(r.id)).map((r) => r.id));
    return { upserts, created, deletes, now, state, namedUnsettled: [...namedUnsettled] };
  }

  /**
   * Once the previous batch has committed: locks what this batch names of it (ADR 43, "Under
   * concurrency"), or refuses the batch if a delete committed in between removed one of them.
   */
  async lockNamedUnsettled(tx: RecordBatch, checked: Checked, appliedLines: number, importId: string): Promise<void> {
    if (checked.namedUnsettled.length === 0 || this.options.dryRun) return;
    const found = await tx.existing(this.workspaceId, checked.namedUnsettled);
    const gone = checked.namedUnsettled.filter((id) => !found.has(id));
    if (gone.length === 0) return;
    throw new AppError(
      'conflict',
      `${gone.slice(0, 3).join(', ')}${gone.length > 3 ? ', ...' : ''} was written by this import and deleted by another writer before the next batch, which names it, committed. The import ${importId} stopped after ${appliedLines} lines applied in whole batches; running the same import again converges.`,
      { lines_applied: appliedLines, import_id: importId },
    );
  }

  /** Writes a checked batch inside its transaction `tx` (a dry run writes nothing). */
  async write(tx: RecordBatch, checked: Checked): Promise<void> {
    if (this.options.dryRun) return;
    await tx.upsert(checked.upserts, checked.created);
    await tx.delete(this.workspaceId, checked.deletes, checked.now);
  }

  /**
   * The records that name `id` at this line: the stored ones the import has not changed, the
   * changed ones that name it now, and earlier lines still waiting for it to be written.
   */
  private referrersOf(id: string, stored: Map<string, Referrer[]> | undefined): Referrer[] {
    const fromDatabase = (stored?.get(id) ?? []).filter((r) => !this.pending.overrides(r.id));
    const waiting: Referrer[] = [];
    for (const wid of this.waitersOf.get(id) ?? []) {
      const op = this.waiting.get(wid)?.op;
      for (const r of op?.refs ?? []) if (r.id === id) waiting.push({ register: op!.register.path, field: fieldOf(r.pointer), id: wid });
    }
    return [...fromDatabase, ...this.pending.referrersOf(id), ...waiting].filter((r) => r.id !== id);
  }

  private wait(op: Upsert, missing: { pointer: string; id: string }[]): void {
    if (this.waiting.size >= MAX_WAITING) {
      const first = missing[0] as { pointer: string; id: string };
      const problem = danglingProblem(`/record${first.pointer}`, first.id);
      this.report.refuse(
        {
          line: op.line,
          ...problem,
          detail: `${problem.detail} (more than ${MAX_WAITING} records wait for later lines: write what is referenced first)`,
        },
        op.register,
      );
      return;
    }
    const set = new Set(missing.map((m) => m.id));
    this.waiting.set(op.id, { op, missing: set });
    for (const id of set) {
      const w = this.waitersOf.get(id) ?? new Set<string>();
      this.waitersOf.set(id, w);
      w.add(op.id);
    }
  }

  /** A later line for the same id replaces a waiting one: the waiting line counts as unchanged. */
  private supersede(id: string, counts: RegisterCounts): void {
    const w = this.waiting.get(id);
    if (!w) return;
    this.waiting.delete(id);
    for (const m of w.missing) this.waitersOf.get(m)?.delete(id);
    const i = this.ready.indexOf(w.op);
    if (i >= 0) this.ready.splice(i, 1);
    counts.upsert.unchanged++;
  }

  private resolved(id: string): void {
    const waiters = this.waitersOf.get(id);
    if (!waiters) return;
    this.waitersOf.delete(id);
    for (const wid of waiters) {
      const w = this.waiting.get(wid);
      if (!w) continue;
      w.missing.delete(id);
      if (w.missing.size === 0) {
        this.waiting.delete(wid);
        this.ready.push(w.op);
      }
    }
  }

  /**
   * The end of the import: ready records are written; of those still waiting, the ones that
   * name only other waiting records (and so on) are written together, the rest refused.
   */
  async finish(tx: RecordBatch): Promise<void> {
    while (this.ready.length) await this.apply(tx, []);
    const waiting = new Map(this.waiting);
    let dropped = true;
    while (dropped) {
      dropped = false;
      for (const [id, w] of waiting) {
        const bad = w.op.refs.filter((r) => w.missing.has(r.id) && !waiting.has(r.id));
        if (bad.length > 0) {
          waiting.delete(id);
          this.report.refuse(
            bad.map((ref) => ({ line: w.op.line, ...danglingProblem(`/record${ref.pointer}`, ref.id) })),
            w.op.register,
          );
          dropped = true;
        }
      }
    }
    this.waiting.clear();
    this.waitersOf.clear();
    const cycle = [...waiting.values()].map((w) => w.op).sort((a, b) => a.line - b.line);
    const trusted = new Set(cycle);
    const lines = this.services.database.engine.importBatchLines;
    for (let i = 0; i < cycle.length; i += lines) await this.apply(tx, cycle.slice(i, i + lines), trusted);
  }
}

/** Reads `source` (NDJSON bytes) and applies it to the workspace; see the module's comment. */
export async function importRecords(
  services: ImportServices,
  workspaceId: string,
  source: AsyncIterable<Buffer | string>,
  options: ImportOptions,
): Promise<ImportReport> {
  await getWorkspace(services.database.db, workspaceId);
  const run = await startImport(services, workspaceId, options);
  const heartbeat = keepAlive(run);
  let committed: boolean;
  try {
    committed = options.atomic ? await importAtomically(run, source) : await importInBatches(run, source);
  } catch (err) {
    clearInterval(heartbeat);
    throw await recordFailure(run, err);
  }
  clearInterval(heartbeat);
  options.onProgress?.({ lines: run.report.lines, refused: run.report.refusedCount });
  return settle(services, workspaceId, run.report, run.startedAt, options, committed);
}

/** One import as it runs: what its steps share. */
interface ImportRun {
  services: ImportServices;
  workspaceId: string;
  options: ImportOptions;
  report: Report;
  startedAt: string;
  applier: Applier;
  /** One line of the body: its operation joins `into`, or the line is refused. */
  accept: (line: Line, into: Op[]) => void;
}

/** Records the import as started (the Data page lists it from now on). */
async function startImport(services: ImportServices, workspaceId: string, options: ImportOptions): Promise<ImportRun> {
  const report = new Report();
  const startedAt = new Date(services.clock()).toISOString();
  await services.database.db
    .insertInto('record_imports')
    .values({
      id: report.id,
      workspace_id: workspaceId,
      actor: options.actor,
      started_at: startedAt,
      finished_at: null,
      dry_run: options.dryRun ? 1 : 0,
      atomic: options.atomic ? 1 : 0,
      lines: 0,
      refused: 0,
      report: '{}',
      owner: THIS_PROCESS,
      alive_at: startedAt,
    })
    .execute();
  const applier = new Applier(services, workspaceId, report, options);
  return { services, workspaceId, options, report, startedAt, applier, accept: lineAcceptor(report, options) };
}

/** While it waits for its client between batches, the import still shows it is alive. */
function keepAlive({ services, report }: ImportRun): NodeJS.Timeout {
  const heartbeat = setInterval(() => {
    void services.database.db
      .updateTable('record_imports')
      .set({ alive_at: new Date(services.clock()).toISOString() })
      .where('id', '=', report.id)
      .where('finished_at', 'is', null)
      .execute()
      .catch(() => undefined);
  }, HEARTBEAT_MS);
  heartbeat.unref();
  return heartbeat;
}

/** Made once per import: the function every line of the body goes through. */
function lineAcceptor(report: Report, options: ImportOptions): ImportRun['accept'] {
  const keep = !!options.keepTimestamps;
  return (line, into) => {
    // Counted, not numbered: blank lines, and the blank line a CSV's header becomes
    // (csv-operations.ts), are never accepted, so a header and 2 rows are 2 lines.
    report.lines++;
    if (!('text' in line)) {
      report.refuse(lineProblem(line.number, line.error));
      return;
    }
    const { text } = line;
    const op = parseOperation(line.number, text, keep, !options.dryRun);
    if (isRefused(op)) {
      const registerName = /"register"\s*:\s*"([a-z-]+)"/.exec(text)?.[1];
      report.refuse(op, registerName ? registerByPath(registerName) : undefined);
    } else {
      if (op.kind === 'upsert') report.upserted(op.register, op.id, line.number);
      into.push(op);
    }
  };
}

/** The progress a batch records in its own transaction: the lines up to its end, the counts with its own. */
function progressAt(run: ImportRun, lines: number, refused: number, batch: BatchCounts): ImportProgress {
  const { report, options } = run;
  return {
    id: report.id,
    lines,
    refused,
    aliveAt: new Date(run.services.clock()).toISOString(),
    report: JSON.stringify({
      id: report.id,
      workspace_id: run.workspaceId,
      dry_run: !!options.dryRun,
      atomic: !!options.atomic,
      keep_timestamps: !!options.keepTimestamps,
      lines,
      counts: report.countsWith(batch),
      refused_count: refused,
      refused: report.refused.slice(0, 100),
      started_at: run.startedAt,
    }),
  };
}

/** `atomic`: the body read whole, then applied in one transaction. Returns whether it committed. */
async function importAtomically(run: ImportRun, source: AsyncIterable<Buffer | string>): Promise<boolean> {
  const { accept, report } = run;
  const ops: Op[] = [];
  for await (const lines of ndjsonLines(source, MAX_LINE_BYTES)) {
    for (const line of lines) {
      if (sliceUsed()) await nextSlice();
      if (line.number > ATOMIC_MAX_LINES) {
        throw new AppError(
          'payload_too_large',
          `An atomic import holds at most ${ATOMIC_MAX_LINES} lines; split the file, or import it without atomic=true (batches).`,
        );
      }
      accept(line, ops);
    }
  }
  if (report.refusedCount > 0) return false;
  try {
    await applyInOneTransaction(run, ops);
  } catch (err) {
    if (err instanceof RolledBack) return false;
    throw err;
  }
  return !run.options.dryRun && report.refusedCount === 0;
}

/** An atomic import's one transaction; a reference refused at its end rolls it back (RolledBack). */
async function applyInOneTransaction(run: ImportRun, ops: Op[]): Promise<void> {
  const { services, report, applier, options } = run;
  const batchLines = services.database.engine.importBatchLines;
  await services.database.engine
    .writeRecords(async (tx) => {
      for (let i = 0; i < ops.length; i += batchLines) await applier.apply(tx, ops.slice(i, i + batchLines));
      await applier.finish(tx);
      // A refused reference undoes the whole import: roll back by throwing.
      if (report.refusedCount > 0 && !options.dryRun) throw new RolledBack();
      await tx.importProgress(progressAt(run, report.lines, report.refusedCount, report.pendingCounts()));
    })
    .then(
      () => report.commit(report.takePending(), report.lines),
      (err) => {
        // Rolled back for a refused line: the report still says what each line would have done.
        const counts = report.takePending();
        if (err instanceof RolledBack) report.commit(counts, 0);
        throw err;
      },
    );
}

/**
 * The body in batches, each its own transaction. The next batch is read while the previous one
 * is checked and written, and checked while it is written (on PostgreSQL, on another session: the
 * database works while this process parses and checks). At most two batches are open; they
 * commit one after another, in line order, and a batch whose predecessor fails rolls back.
 * Returns whether it committed (not for a dry run).
 */
async function importInBatches(run: ImportRun, source: AsyncIterable<Buffer | string>): Promise<boolean> {
  const { accept, applier } = run;
  const batchLines = run.services.database.engine.importBatchLines;
  let batch: Op[] = [];
  let writing: Promise<void> = Promise.resolve();
  /** The batch before the last: committed before the next batch starts. */
  let older: Promise<void> = Promise.resolve();
  /** The last batch, once checked (its state is the next one's `before`). */
  let checked: Promise<Unsettled | undefined> = Promise.resolve(undefined);
  const flush = async () => {
    const before = await checked;
    await older;
    if (batch.length === 0 && !applier.hasReady) return;
    const ops = batch;
    batch = [];
    const started = startBatch(run, ops, before, writing);
    checked = started.checked;
    older = writing;
    writing = started.committed;
  };
  try {
    for await (const lines of ndjsonLines(source, MAX_LINE_BYTES)) {
      for (const line of lines) {
        // A chunk of the body holds hundreds of lines, parsed without a turn of the event loop
        // otherwise.
        if (sliceUsed()) await nextSlice();
        accept(line, batch);
        if (batch.length >= batchLines) await flush();
      }
    }
    await flush();
    await writing;
    await finishBatches(run);
  } catch (err) {
    // A batch still being written when the stream failed is whole or absent: wait for it, so
    // the report counts what was committed.
    await writing.catch(() => undefined);
    throw err;
  }
  return !run.options.dryRun;
}

/**
 * Opens one batch's transaction, which checks `ops`, writes them, and commits once `previous`
 * has. Returns its check (settled before it is written) and its commit.
 */
function startBatch(
  run: ImportRun,
  ops: Op[],
  before: Unsettled | undefined,
  previous: Promise<void>,
): { checked: Promise<Unsettled>; committed: Promise<void> } {
  const { services, report, applier, options } = run;
  const lines = report.lines;
  const refused = report.refusedCount;
  let counts: BatchCounts = {};
  let settleChecked!: { resolve: (u: Unsettled) => void; reject: (err: unknown) => void };
  const checked = new Promise<Unsettled>((resolve, reject) => {
    settleChecked = { resolve, reject };
  });
  // A batch that fails to check stops the reading at the next flush.
  checked.catch(() => undefined);
  const committed = services.database.engine
    .writeRecords(async (tx) => {
      let c: Checked;
      try {
        c = await applier.check(tx, ops, undefined, before);
      } catch (err) {
        settleChecked.reject(err);
        throw err;
      }
      counts = report.takePending();
      settleChecked.resolve({ state: c.state, deletes: c.deletes.length > 0, committed });
      await applier.write(tx, c);
      await previous;
      await applier.lockNamedUnsettled(tx, c, report.appliedLines, report.id);
      await tx.importProgress(progressAt(run, lines, refused, counts));
    })
    .then(() => {
      report.commit(counts, lines);
      options.onProgress?.({ lines, refused: report.refusedCount });
    });
  // A transaction that fails before its check (BEGIN refused) must not leave the next flush waiting.
  committed.catch((err) => settleChecked.reject(err));
  // Awaited by a later flush or at the end; until then its failure is not unhandled.
  committed.catch(() => undefined);
  return { checked, committed };
}

/** After the last batch: what still waits for a reference, written or refused in a last transaction. */
async function finishBatches(run: ImportRun): Promise<void> {
  const { services, report, applier } = run;
  await services.database.engine
    .writeRecords(async (tx) => {
      await applier.finish(tx);
      await tx.importProgress(progressAt(run, report.lines, report.refusedCount, report.pendingCounts()));
    })
    .then(() => report.commit(report.takePending(), report.lines));
}

/**
 * A failed import: its outcome recorded as far as the database allows, and the error its caller
 * hears (a storage fault or a deadlock says what the import had applied).
 */
async function recordFailure(run: ImportRun, err: unknown): Promise<unknown> {
  const { services, workspaceId, report, startedAt, options } = run;
  // With the database lost the outcome cannot be recorded: the row stays unfinished until a
  // reader finds its heartbeat stale (import-runs.ts); the caller hears the first failure.
  await settle(services, workspaceId, report, startedAt, options, false, err as Error).catch(() => undefined);
  const fault = storageFaultOf(err);
  if (fault) {
    return new AppError(
      fault.code,
      `${fault.message}. The import ${report.id} stopped after ${report.appliedLines} lines applied in whole batches; running the same import again converges.`,
      { lines_applied: report.appliedLines, import_id: report.id },
      fault,
    );
  }
  if (isDeadlock(err)) {
    // A batch's transaction cannot be run again (the check changed the import's state), so
    // the deadlock's victim ends the import, said as such rather than as a fault.
    return new AppError(
      'conflict',
      `A batch of the import and a concurrent write (another import deleting records, or a write naming a record this batch deletes) waited for each other's rows, and PostgreSQL ended the batch. The import ${report.id} stopped after ${report.appliedLines} lines applied in whole batches; running the same import again converges.`,
      { lines_applied: report.appliedLines, import_id: report.id },
      err,
    );
  }
  return err;
}

class RolledBack extends Error {}

function lineProblem(line: number, error: 'line_too_long' | 'invalid_utf8'): RefusedLine {
  return error === 'line_too_long'
    ? { line, pointer: '', code: 'line_too_long', detail: `is longer than ${MAX_LINE_BYTES} bytes` }
    : { line, pointer: '', code: 'invalid_json', detail: 'is not valid UTF-8' };
}

/** Records the import's outcome (the Data page's list) and its audit event; returns the report. */
async function settle(
  services: ImportServices,
  workspaceId: string,
  report: Report,
  startedAt: string,
  options: ImportOptions,
  committed: boolean,
  failure?: Error,
): Promise<ImportReport> {
  const finishedAt = new Date(services.clock()).toISOString();
  const out: ImportReport = {
    id: report.id,
    workspace_id: workspaceId,
    dry_run: !!options.dryRun,
    atomic: !!options.atomic,
    keep_timestamps: !!options.keepTimestamps,
    committed,
    lines: report.lines,
    counts: report.counts,
    refused_count: report.refusedCount,
    refused: report.refused,
    refused_truncated: report.truncated,
    repeated_count: report.repeatedCount,
    repeated: report.repeated,
    started_at: startedAt,
    finished_at: finishedAt,
  };
  // A failed import counts the lines of the batches it committed, not those it had read.
  const lines = failure ? report.appliedLines : report.lines;
  const stored = {
    ...out,
    lines,
    refused: out.refused.slice(0, 100),
    repeated: out.repeated.slice(0, 100),
    ...(failure ? { failure: failure.message.slice(0, 300), lines_read: report.lines } : {}),
  };
  const db = services.database.db;
  await db
    .updateTable('record_imports')
    .set({ finished_at: finishedAt, lines, refused: report.refusedCount, report: JSON.stringify(stored) })
    .where('id', '=', report.id)
    .execute();
  if (!options.dryRun) {
    await recordAudit(db, {
      workspaceId,
      at: finishedAt,
      actor: options.actor,
      action: 'record.imported',
      target: report.id,
      detail: {
        lines,
        refused: report.refusedCount,
        committed,
        atomic: !!options.atomic,
        ...(failure ? { failed: true } : {}),
      },
    });
  }
  return out;
}
