/**
 * The reverse index of references (ADR 43) is kept by triggers on every write of a record. On
 * PostgreSQL they are statement triggers over transition tables, and they must remove the rows
 * a write drops by key: a form the planner cannot turn into a key lookup reads the whole index
 * on every update and delete of any record, references changed or not (230 ms per PUT at
 * 1,000,000 references; migration 0034). The transaction's own statistics count the rows read.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from '#kysely';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

for (const dialect of DIALECTS) {
  describe(`the reference index is kept by key [${dialect}]`, {
    skip: dialect === 'sqlite' && "SQLite's row triggers name the key",
  }, () => {
    let h: Harness;
    let ws: string;
    before(async () => {
      h = await createHarness(dialect);
      ws = await h.workspace();
    });
    after(() => h?.close());

    const refsOf = async (id: string) =>
      (
        await h.services.database.db
          .selectFrom('record_refs')
          .select('target_id')
          .where('workspace_id', '=', ws)
          .where('source_id', '=', id)
          .orderBy('target_id')
          .execute()
      ).map((r) => r.target_id);

    it('an update that keeps, one that changes and a delete that drops references each touch the index by key, never by reading it whole', async () => {
      const db = h.services.database.db;
      const named = await db
        .selectFrom('records')
        .select(['id', 'refs'])
        .where('workspace_id', '=', ws)
        .where('refs', '<>', '[]')
        .orderBy('id')
        .limit(3)
        .execute();
      assert.equal(named.length, 3, 'the demo data has records that name others');
      const [kept, changed, deleted] = named as [(typeof named)[0], (typeof named)[0], (typeof named)[0]];
      // A workspace of many references: the size at which a statement that cannot look up by key
      // reads them all (with a few hundred, the planner reads them all either way).
      await sql`INSERT INTO record_refs (workspace_id, target_id, source_id)
        SELECT ${ws}, 'per_filler' || g, 'tsk_filler' || g FROM generate_series(1, 50000) g`.execute(db);
      await sql`ANALYZE record_refs`.execute(db);
      const read = await db.transaction().execute(async (trx) => {
        // Rows of record_refs read so far by this session (its statistics not yet flushed included).
        const rowsRead = async () => {
          const { rows } = await sql<{ n: string }>`
            SELECT seq_tup_read + idx_tup_fetch AS n FROM pg_stat_xact_user_tables WHERE relname = 'record_refs'`.execute(trx);
          return Number(rows[0]?.n ?? 0);
        };
        const before = await rowsRead();
        await sql`UPDATE records SET updated_at = updated_at WHERE workspace_id = ${ws} AND id = ${kept.id}`.execute(trx);
        await sql`UPDATE records SET refs = ${JSON.stringify([kept.id])} WHERE workspace_id = ${ws} AND id = ${changed.id}`.execute(trx);
        await sql`DELETE FROM records WHERE workspace_id = ${ws} AND id = ${deleted.id}`.execute(trx);
        return (await rowsRead()) - before;
      });
      // Each reference dropped or added is a key lookup (a row read to delete, or an ON CONFLICT probe).
      const touched = (JSON.parse(changed.refs) as string[]).length + (JSON.parse(deleted.refs) as string[]).length + 1;
      assert.ok(
        read <= 2 * touched,
        `the three statements read ${read} rows of the index for ${touched} references: by key, not the whole index`,
      );
      assert.deepEqual(await refsOf(kept.id), (JSON.parse(kept.refs) as string[]).sort(), 'unchanged references stay');
      assert.deepEqual(await refsOf(changed.id), [kept.id], 'changed references are replaced');
      assert.deepEqual(await refsOf(deleted.id), [], "a deleted record's references go");
    });
  });
}
