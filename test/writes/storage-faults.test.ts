/**
 * A full disk and a lost database, said as such. The database fills up during an HTTP import
 * (SQLite: `PRAGMA max_page_count`, a real SQLITE_FULL; PostgreSQL: the server's own 53100
 * disk_full, raised by a trigger past a row budget): the import answers 503 `storage_full` with
 * Retry-After and the lines its committed batches applied, exactly what is stored and what its
 * row counts; a PUT answers the same; readiness is false; the CLI says it in one line. Once
 * space is back, writes work, readiness is true and the same import converges. A PostgreSQL
 * session ended mid-import (`pg_terminate_backend`) answers 503 `database_unavailable` the same
 * way.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { sql } from '#kysely';
import { reportFailure } from '../../src/cli-kit/output.js';
import { adapterOf } from '../../src/store/database.js';
import { importRecords } from '../../src/writes/import.js';
import { DIALECTS } from '../helpers/databases.js';
import { until } from '../helpers/processes.js';
import { createWriter, site, TEST_TOKEN, type Writer } from './helpers.js';

const upsert = (n: number) => JSON.stringify({ register: 'locations', op: 'upsert', record: site(`loc_f${n}`, `Site ${n}`) });
const lines = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => upsert(from + i)).join('\n');

for (const dialect of DIALECTS) {
  describe(`a full disk and a lost database, said as such [${dialect}]`, () => {
    let w: Writer;
    const batch = adapterOf(dialect).importBatchLines;
    before(async () => {
      w = await createWriter(dialect);
    });
    after(async () => {
      await w.internal.close();
      await w.h.close();
    });

    const db = () => w.h.services.database.db;
    const stored = async (ws: string) =>
      Number(
        (
          await db()
            .selectFrom('records')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('workspace_id', '=', ws)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const importBody = (ws: string, body: string | Readable) =>
      w.internal.inject({
        method: 'POST',
        url: `/internal/v1/workspaces/${ws}/import`,
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/x-ndjson' },
        payload: body,
      });
    const readyz = async () => {
      const res = await w.internal.inject({ method: 'GET', url: '/readyz' });
      return { status: res.statusCode, json: JSON.parse(res.body) };
    };

    /** Lets about two batches more be stored, then the disk is full. */
    async function fillUp(): Promise<() => Promise<void>> {
      if (dialect === 'sqlite') {
        const raw = w.h.services.database.sqlite as NonNullable<typeof w.h.services.database.sqlite>;
        const pages = (raw.prepare('PRAGMA page_count').get() as { page_count: number }).page_count;
        raw.exec(`PRAGMA max_page_count = ${pages + 60}`);
        return async () => {
          raw.exec('PRAGMA max_page_count = 1073741823');
        };
      }
      await sql`CREATE TABLE test_disk (rows integer NOT NULL)`.execute(db());
      await sql`INSERT INTO test_disk VALUES (0)`.execute(db());
      await sql
        .raw(`CREATE FUNCTION test_disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
          DECLARE n integer;
          BEGIN
            UPDATE test_disk SET rows = rows + 1 RETURNING rows INTO n;
            IF n > ${2 * batch} THEN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END IF;
            RETURN NEW;
          END $$`)
        .execute(db());
      await sql`CREATE TRIGGER test_disk_full BEFORE INSERT ON records FOR EACH ROW EXECUTE FUNCTION test_disk_full()`.execute(db());
      return async () => {
        await sql`DROP TRIGGER test_disk_full ON records`.execute(db());
        await sql`DROP FUNCTION test_disk_full()`.execute(db());
        await sql`DROP TABLE test_disk`.execute(db());
      };
    }

    it('an import that fills the disk: 503 storage_full with Retry-After and the lines applied (exactly what is stored); a PUT too; readiness false; the CLI line; then space is back and the same import converges', async () => {
      const ws = await w.h.workspace({ seed: false });
      const total = 8 * batch;
      const spaceBack = await fillUp();
      try {
        const res = await importBody(ws, lines(1, total));
        assert.equal(res.statusCode, 503, res.body);
        assert.equal(res.headers['retry-after'], '30');
        assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
        const problem = JSON.parse(res.body);
        assert.equal(problem.code, 'storage_full');
        assert.match(problem.type, /\/developers\/errors#storage_full$/);
        assert.match(problem.detail, /disk is full \((SQLITE_FULL|53100)/);
        assert.match(problem.detail, /running the same import again converges/);
        const applied = problem.lines_applied as number;
        assert.ok(applied > 0 && applied < total && applied % batch === 0, `whole batches: ${applied}`);
        assert.equal(await stored(ws), applied, 'nothing written half: the stored records are the lines applied');
        const row = await db().selectFrom('record_imports').selectAll().where('id', '=', problem.import_id).executeTakeFirstOrThrow();
        assert.equal(row.lines, applied);
        assert.equal(JSON.parse(row.report).counts.locations.upsert.created, applied, 'the failed batch is not counted as written');

        const ready = await readyz();
        assert.equal(ready.status, 503);
        assert.equal(ready.json.checks.storage.ok, false);
        assert.match(ready.json.checks.storage.error, /disk is full/);

        // SQLite: not one page more than the database holds now (the failed batch's pages went with it).
        if (dialect === 'sqlite') w.h.services.database.sqlite?.exec('PRAGMA max_page_count = 1');
        const put = await w.write('PUT', `${ws}/locations/loc_put`, { ...site('loc_put'), address: 'Quay '.repeat(200) });
        assert.equal(put.status, 503, put.body);
        assert.equal(put.json.code, 'storage_full');
        assert.equal(put.headers['retry-after'], '30');

        // The CLI's line for the same failure: one line, the cause named, exit 1.
        const failure = await importRecords(w.h.services, ws, Readable.from([lines(total + 1, total + 3 * batch)]), {
          actor: 'operator',
        }).catch((e) => e);
        const written: string[] = [];
        const write = process.stderr.write;
        process.stderr.write = ((text: string) => {
          written.push(text);
          return true;
        }) as unknown as typeof process.stderr.write;
        let status: number;
        try {
          status = reportFailure(failure);
        } finally {
          process.stderr.write = write;
        }
        assert.equal(status, 1);
        assert.equal(written.length, 1);
        assert.match(
          written[0] as string,
          /^wsops: the database's disk is full \((SQLITE_FULL|53100).* lines applied in whole batches; running the same import again converges\.\n$/,
        );
        assert.doesNotMatch(written[0] as string, /cannot rollback|\n\s+at /);
      } finally {
        await spaceBack();
      }

      const put = await w.write('PUT', `${ws}/locations/loc_put`, site('loc_put'));
      assert.equal(put.status, 201, put.body);
      assert.equal((await readyz()).status, 200, 'ready once a write commits again');
      const again = await importBody(ws, lines(1, total));
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(await stored(ws), total + 1, 'the same import converges');
    });

    if (dialect === 'postgres') {
      it('the session ended mid-import (pg_terminate_backend): 503 database_unavailable with the lines applied, and the same import converges', async () => {
        const ws = await w.h.workspace({ seed: false });
        // A real listener and a streamed body: the import reads it batch by batch as it arrives.
        const address = await w.internal.listen({ port: 0, host: '127.0.0.1' });
        const stream = new TransformStream<Uint8Array, Uint8Array>();
        const writer = stream.writable.getWriter();
        const encoder = new TextEncoder();
        const body = { push: (text: string | null) => (text === null ? writer.close() : writer.write(encoder.encode(text))) };
        const answer = fetch(`${address}/internal/v1/workspaces/${ws}/import`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/x-ndjson' },
          body: stream.readable,
          duplex: 'half',
        } as RequestInit);
        void body.push(`${lines(1, 2 * batch + batch / 2)}\n`);
        const row = () => db().selectFrom('record_imports').select(['id', 'lines']).where('workspace_id', '=', ws).executeTakeFirst();
        await until(async () => (await row())?.lines === 2 * batch, 60_000, 'two batches committed');
        // The next batch waits on a lock held here, and its session is ended while it waits: the
        // connection is lost in the middle of the batch's transaction.
        const locker = new pg.Client({ connectionString: w.h.databaseUrl });
        await locker.connect();
        try {
          await locker.query('BEGIN');
          await locker.query('LOCK TABLE records IN EXCLUSIVE MODE');
          void body.push(`${lines(2 * batch + batch / 2 + 1, 5 * batch)}\n`);
          const waiting = await until(
            async () =>
              (
                await locker.query<{ pid: number }>(
                  "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()",
                )
              ).rows[0]?.pid,
            60_000,
            'the third batch waiting on the lock',
          );
          await locker.query('SELECT pg_terminate_backend($1)', [waiting]);
          await locker.query('ROLLBACK');
        } finally {
          await locker.end();
        }
        await body.push(null);
        const res = await answer;
        const text = await res.text();
        assert.equal(res.status, 503, text);
        assert.equal(res.headers.get('retry-after'), '30');
        const problem = JSON.parse(text);
        assert.equal(problem.code, 'database_unavailable');
        assert.match(problem.detail, /connection to the database was lost/);
        assert.equal(problem.lines_applied, 2 * batch);
        assert.equal(await stored(ws), 2 * batch);
        const again = await importBody(ws, lines(1, 5 * batch));
        assert.equal(again.statusCode, 200, again.body);
        assert.equal(await stored(ws), 5 * batch);
      });
    }
  });
}
