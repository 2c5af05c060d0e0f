/**
 * A domain action's statements on PostgreSQL (engine.ts, ActionStatements): fixed texts, each a
 * named statement that a session parses and plans once (postgres-prepared.ts), run in the
 * action's transaction. Every read locks the rows it returns until the transaction ends.
 *
 * Actions never delete a record, so the rows they change are locked FOR NO KEY UPDATE, not FOR
 * UPDATE: a write naming one of them takes FOR KEY SHARE on it (ADR 43, "Under concurrency"),
 * which only FOR UPDATE blocks; with FOR UPDATE, an action waiting for a row that write holds
 * while holding the row the write waits for was a deadlock. A record an action checks but does
 * not change is FOR SHARE: it blocks a delete of it until the action commits.
 */
import { CompiledQuery, type Kysely } from '#kysely';
import { HOLDS_EVENTS, RECEIVES_EVENTS } from '../event-receivers.js';
import { COLUMNS, upsertOneSql } from '../record-batches.js';
import type { DB } from '../schema.js';
import type { ActionStatements, WorkspaceEndpointRow } from './engine.js';
import { prepared } from './postgres-prepared.js';

const RECORD = 'SELECT doc FROM records WHERE id = $1 AND workspace_id = $2 AND register = $3';
const LOCKS = { update: prepared(`${RECORD} FOR NO KEY UPDATE`), share: prepared(`${RECORD} FOR SHARE`) };
/**
 * The referrers of an id, by the reverse index (ADR 43), their register told by the ids' prefix
 * (as on SQLite). `IN`, not a join: a row lock locks every table of the FROM list, and a PUT
 * changing a record's references deletes its rows of the index, so the two could deadlock.
 */
const NAMING = `SELECT doc FROM records WHERE workspace_id = $1 AND id IN (SELECT source_id FROM record_refs
  WHERE workspace_id = $1 AND target_id = $2 AND source_id >= $3 AND source_id < $4)`;
const NAMING_ANY = prepared(`${NAMING} FOR NO KEY UPDATE`);
const NAMING_IN = prepared(`${NAMING} AND status = ANY($5::text[]) FOR NO KEY UPDATE`);
const WORKSPACE = prepared(`SELECT w.modules, e.id, e.events, e.scopes, e.filter, ${HOLDS_EVENTS} AS held FROM workspaces w
  LEFT JOIN webhook_endpoints e ON e.workspace_id = w.id AND ${RECEIVES_EVENTS} WHERE w.id = $1`);
const UPSERT = prepared(upsertOneSql((i) => `$${i + 1}`));
const UNBURY = prepared('DELETE FROM record_tombstones WHERE workspace_id = $1 AND id = $2');

/** Rows of `table` from a JSON array, columns as the row builder made them (auditRow, the outbox's rows). */
const fromJson = (table: string, columns: readonly string[], param: string) =>
  `INSERT INTO ${table} (${columns.join(', ')}) SELECT ${columns.join(', ')} FROM json_populate_recordset(NULL::${table}, ${param})`;

export function postgresActionStatements(trx: Kysely<DB>, workspaceId: string): ActionStatements {
  const run = async <R>(text: string, params: readonly unknown[]) => (await trx.executeQuery<R>(CompiledQuery.raw(text, [...params]))).rows;
  const docs = async (text: string, params: readonly unknown[]) => (await run<{ doc: string }>(text, params)).map((r) => r.doc);
  return {
    async record(register, id, lock) {
      return (await docs(LOCKS[lock], [id, workspaceId, register]))[0];
    },
    naming(idPrefix, target, statuses) {
      const params = [workspaceId, target, `${idPrefix}_`, `${idPrefix}\``];
      return statuses ? docs(NAMING_IN, [...params, statuses]) : docs(NAMING_ANY, params);
    },
    matching(register, statuses, mention) {
      const params: unknown[] = [workspaceId, register];
      let text = 'SELECT doc FROM records WHERE workspace_id = $1 AND register = $2';
      if (statuses) text += ` AND status = ANY($${params.push(statuses)}::text[])`;
      if (mention !== null) text += ` AND doc LIKE $${params.push(`%${mention}%`)}`;
      return docs(prepared(`${text} FOR NO KEY UPDATE`), params);
    },
    workspace() {
      return run<WorkspaceEndpointRow>(WORKSPACE, [workspaceId]);
    },
    async put(row, locked) {
      await run(
        UPSERT,
        COLUMNS.map((c) => row[c]),
      );
      if (!locked) await run(UNBURY, [workspaceId, row.id]);
    },
    async append(audit, events, jobs) {
      // One statement, so one round trip: each insert but the last a WITH of it.
      const parts: [string, readonly object[]][] = [['audit_events', [audit]]];
      if (events.length) parts.push(['events', events]);
      if (jobs.length) parts.push(['delivery_jobs', jobs]);
      const inserts = parts.map(([table, rows], i) => fromJson(table, Object.keys(rows[0] as object), `$${i + 1}::json`));
      const last = inserts.pop() as string;
      const text = inserts.length ? `WITH ${inserts.map((insert, i) => `w${i} AS (${insert})`).join(', ')} ${last}` : last;
      await run(
        prepared(text),
        parts.map(([, rows]) => JSON.stringify(rows)),
      );
    },
  };
}
