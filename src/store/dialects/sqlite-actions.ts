/**
 * A domain action's statements on SQLite (engine.ts, ActionStatements): prepared once on the
 * writer connection and run on it, inside the action's transaction, which holds that connection
 * and the database's write lock (BEGIN IMMEDIATE), so a read needs no lock of its own.
 */
import type SQLite from 'better-sqlite3';
import { HOLDS_EVENTS, RECEIVES_EVENTS } from '../event-receivers.js';
import { COLUMNS, upsertOneSql } from '../record-batches.js';
import type { ActionStatements, WorkspaceEndpointRow } from './engine.js';
import { preparedStatement } from './sqlite-prepared.js';

const RECORD = 'SELECT doc FROM records WHERE id = ? AND workspace_id = ? AND register = ?';
/**
 * The referrers of an id, by the reverse index (ADR 43): `register =` beside it made SQLite walk
 * the register's status index instead, so the register is told by the ids' prefix (from `prefix_`
 * to the character after `_`, a backtick).
 */
const NAMING =
  'SELECT doc FROM records WHERE workspace_id = ? AND id IN (SELECT source_id FROM record_refs WHERE workspace_id = ? AND target_id = ? AND source_id >= ? AND source_id < ?)';
const IN_STATUSES = ' AND status IN (SELECT value FROM json_each(?))';
const WORKSPACE = `SELECT w.modules, e.id, e.events, e.scopes, e.filter, ${HOLDS_EVENTS} AS held FROM workspaces w
  LEFT JOIN webhook_endpoints e ON e.workspace_id = w.id AND ${RECEIVES_EVENTS} WHERE w.id = ?`;
const UPSERT = upsertOneSql(() => '?');
const UNBURY = 'DELETE FROM record_tombstones WHERE workspace_id = ? AND id = ?';

const docs = (rows: unknown[]) => (rows as { doc: string }[]).map((r) => r.doc);

export function sqliteActionStatements(raw: SQLite.Database, workspaceId: string): ActionStatements {
  const statement = (text: string) => preparedStatement(raw, text);
  /** A row into `table`, its columns as the row builder made them (auditRow, the outbox's rows). */
  const insert = (table: string, row: object) => {
    const columns = Object.keys(row);
    statement(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`).run(Object.values(row));
  };
  return {
    async record(register, id) {
      return (statement(RECORD).get(id, workspaceId, register) as { doc: string } | undefined)?.doc;
    },
    async naming(idPrefix, target, statuses) {
      const params = [workspaceId, workspaceId, target, `${idPrefix}_`, `${idPrefix}\``];
      if (!statuses) return docs(statement(NAMING).all(params));
      return docs(statement(NAMING + IN_STATUSES).all(...params, JSON.stringify(statuses)));
    },
    async matching(register, statuses, mention) {
      const text = `SELECT doc FROM records WHERE workspace_id = ? AND register = ?${statuses ? IN_STATUSES : ''}${mention === null ? '' : ' AND doc LIKE ?'}`;
      const params: string[] = [workspaceId, register];
      if (statuses) params.push(JSON.stringify(statuses));
      if (mention !== null) params.push(`%${mention}%`);
      return docs(statement(text).all(params));
    },
    async workspace() {
      return statement(WORKSPACE).all(workspaceId) as WorkspaceEndpointRow[];
    },
    async put(row, locked) {
      statement(UPSERT).run(COLUMNS.map((c) => row[c]));
      if (!locked) statement(UNBURY).run(workspaceId, row.id);
    },
    async append(audit, events, jobs) {
      insert('audit_events', audit);
      for (const event of events) insert('events', event);
      for (const job of jobs) insert('delivery_jobs', job);
    },
  };
}
