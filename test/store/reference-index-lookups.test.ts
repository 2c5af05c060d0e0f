/**
 * The reverse index of references (ADR 43) is kept by triggers on every write of a record. On
 * PostgreSQL they are statement triggers over transition tables, and they must remove the rows
 * a write drops by key: a form the planner cannot turn into a key lookup reads the whole index
 * on every update and delete of any record, references changed or not (230 ms per PUT at
 * 1,000,000 references; migration 0034). Nor may the removal depend on the table's statistics:
 * without any (a new deployment, autovacuum off), the planner read the workspace's whole index by
 * its first column (migration 0036). The transaction's own statistics count the blocks read.
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
      // No ANALYZE: the table has no statistics, as in a new deployment before autovacuum's first visit.
      const read = await db.transaction().execute(async (trx) => {
        // Blocks of record_refs and its index read so far by this session's transaction: an index
        // entry a scan passes over without returning it counts here, where rows read would not.
        const blocksRead = async () => {
          const { rows } = await sql<{ n: string }>`
            SELECT sum(pg_stat_get_xact_blocks_fetched(oid)) AS n FROM pg_class
            WHERE oid = 'record_refs'::regclass OR oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'record_refs'::regclass)`.execute(
            trx,
          );
          return Number(rows[0]?.n ?? 0);
        };
        const before = await blocksRead();
        await sql`UPDATE records SET updated_at = updated_at WHERE workspace_id = ${ws} AND id = ${kept.id}`.execute(trx);
        await sql`UPDATE records SET refs = ${JSON.stringify([kept.id])} WHERE workspace_id = ${ws} AND id = ${changed.id}`.execute(trx);
        await sql`DELETE FROM records WHERE workspace_id = ${ws} AND id = ${deleted.id}`.execute(trx);
        return (await blocksRead()) - before;
      });
      // Each reference dropped or added is a key lookup: a descent of the index (a few blocks) and
      // the row's block. Reading the workspace's 50,000 entries is hundreds of blocks.
      const touched = (JSON.parse(changed.refs) as string[]).length + (JSON.parse(deleted.refs) as string[]).length + 1;
      assert.ok(
        read <= 10 * touched,
        `the three statements read ${read} blocks of the index and its table for ${touched} references: by key, not the whole index`,
      );
      assert.deepEqual(await refsOf(kept.id), (JSON.parse(kept.refs) as string[]).sort(), 'unchanged references stay');
      assert.deepEqual(await refsOf(changed.id), [kept.id], 'changed references are replaced');
      assert.deepEqual(await refsOf(deleted.id), [], "a deleted record's references go");
    });
  });
}
