/**
 * A delete racing a write that names the deleted record (issue 56): one of the two loses, and no
 * stored record is left naming a missing one (ADR 43, "Under concurrency"). Each pair is sent at
 * once across two real API processes on one database, the delete to one and the write to the
 * other (swapped for every other pair), on each write path: PUT, PATCH of a stored person, an
 * import line, and a domain action (asset.assign to the person being deleted). On PostgreSQL,
 * the deadlocks the row locks still allow: a single write is run again, an import stops with 409.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { sql } from '#kysely';
import { patchRecord, registerNamed } from '../../src/writes/record-writes.js';
import { type ApiProcesses, startApiProcesses } from '../helpers/api-processes.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { person, site } from './helpers.js';

/** Pairs per write path, and pairs in flight at once. */
const PAIRS = 150;
const IN_FLIGHT = 8;

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  json: any;
}

/** Runs `task(0..count-1)`, `limit` at a time. */
async function pool<T>(count: number, limit: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await task(i);
      }
    }),
  );
  return out;
}

function asset(id: string) {
  return {
    id,
    asset_tag: `TAG-${id}`,
    name: 'Laptop',
    category: 'LAPTOP',
    status: 'AVAILABLE',
    location_id: null,
    assigned_user_id: null,
    assigned_at: null,
    expected_return_at: null,
    serial_number: null,
    purchase_date: null,
    warranty_expires_on: null,
    custody: [],
  };
}

for (const dialect of DIALECTS) {
  describe(`a delete racing a write that names the deleted record [${dialect}]`, () => {
    let h: Harness;
    let api: ApiProcesses;
    before(async () => {
      h = await createHarness(dialect);
      api = await startApiProcesses(h.databaseUrl, 2);
    });
    after(async () => {
      await api?.stop();
      await h?.close();
    });

    async function send(process: number, method: string, path: string, body?: unknown, type = 'application/json'): Promise<Answer> {
      const res = await fetch(`${api.internalUrls[process]}${path}`, {
        method,
        headers: { authorization: `Bearer ${api.operatorToken}`, ...(body === undefined ? {} : { 'content-type': type }) },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, json: text ? JSON.parse(text) : undefined };
    }
    const record = (ws: string, register: string, id: string) => `/internal/v1/workspaces/${ws}/${register}/${id}`;

    /** A stored reference whose target is missing: `source -> target`. */
    async function danglingReferences(ws: string): Promise<string[]> {
      const db = h.services.database.db;
      const indexed = await db
        .selectFrom('record_refs')
        .leftJoin('records', (j) =>
          j.onRef('records.workspace_id', '=', 'record_refs.workspace_id').onRef('records.id', '=', 'record_refs.target_id'),
        )
        .select(['record_refs.source_id', 'record_refs.target_id'])
        .where('record_refs.workspace_id', '=', ws)
        .where('records.id', 'is', null)
        .execute();
      // The documents themselves too, not only the index the triggers keep.
      const rows = await db.selectFrom('records').select(['id', 'doc']).where('workspace_id', '=', ws).execute();
      const ids = new Set(rows.map((r) => r.id));
      const inDocs: string[] = [];
      for (const r of rows) {
        const doc = JSON.parse(r.doc) as Record<string, unknown>;
        const named = [
          doc.manager_id,
          doc.assigned_user_id,
          ...((doc.custody as { person_id: string }[] | undefined) ?? []).map((c) => c.person_id),
        ];
        for (const target of named) if (typeof target === 'string' && !ids.has(target)) inDocs.push(`${r.id} -> ${target}`);
      }
      return [...indexed.map((r) => `${r.source_id} -> ${r.target_id} (index)`), ...inDocs];
    }

    /**
     * `pairs` races in workspace `ws`: `prepare(i)` stores the target (and whatever the write
     * needs), then the delete of target i and `write(i, process)` are sent at once, to different
     * processes. Checks every answer and returns how many pairs had both succeed.
     */
    async function race(
      ws: string,
      prepare: (i: number) => Promise<void>,
      write: (i: number, process: number) => Promise<Answer>,
      wrote: (a: Answer) => boolean,
    ): Promise<{ both: number; deleted: number; written: number }> {
      const outcomes = await pool(PAIRS, IN_FLIGHT, async (i) => {
        await prepare(i);
        const [deleter, writer] = i % 2 === 0 ? [0, 1] : [1, 0];
        const [d, w] = await Promise.all([send(deleter, 'DELETE', record(ws, 'people', `per_t${i}`)), write(i, writer)]);
        assert.ok(
          d.status === 204 || (d.status === 409 && d.json.code === 'referenced'),
          `pair ${i}: the delete answered ${d.status} ${JSON.stringify(d.json)}`,
        );
        return { deleted: d.status === 204, written: wrote(w) };
      });
      return {
        both: outcomes.filter((o) => o.deleted && o.written).length,
        deleted: outcomes.filter((o) => o.deleted).length,
        written: outcomes.filter((o) => o.written).length,
      };
    }

    async function workspaceWithSite(): Promise<string> {
      const ws = await h.workspace({ seed: false });
      assert.equal((await send(0, 'PUT', record(ws, 'locations', 'loc_hq'), site('loc_hq'))).status, 201);
      return ws;
    }
    const putTarget = (ws: string, i: number) => send(i % 2, 'PUT', record(ws, 'people', `per_t${i}`), person(`per_t${i}`, 'loc_hq'));
    /** A write refused for naming a missing record: 422 dangling_reference at /manager_id. */
    const refusedAsDangling = (a: Answer, i: number) =>
      assert.ok(
        a.status === 422 && a.json.code === 'invalid_record' && a.json.errors?.[0]?.code === 'dangling_reference',
        `pair ${i}: the write answered ${a.status} ${JSON.stringify(a.json)}`,
      );

    it('PUT of a person naming the person being deleted: never both, nothing dangles', async () => {
      const ws = await workspaceWithSite();
      const counts = await race(
        ws,
        async (i) => assert.equal((await putTarget(ws, i)).status, 201),
        async (i, p) => {
          const a = await send(p, 'PUT', record(ws, 'people', `per_r${i}`), person(`per_r${i}`, 'loc_hq', { manager_id: `per_t${i}` }));
          if (a.status !== 201) refusedAsDangling(a, i);
          return a;
        },
        (a) => a.status === 201,
      );
      assert.equal(counts.both, 0, `both answered 2xx in ${counts.both} of ${PAIRS} pairs (${JSON.stringify(counts)})`);
      assert.deepEqual(await danglingReferences(ws), []);
    });

    it('PATCH of a stored person to name the person being deleted: never both, nothing dangles', async () => {
      const ws = await workspaceWithSite();
      const counts = await race(
        ws,
        async (i) => {
          assert.equal((await putTarget(ws, i)).status, 201);
          assert.equal((await send(i % 2, 'PUT', record(ws, 'people', `per_r${i}`), person(`per_r${i}`, 'loc_hq'))).status, 201);
        },
        async (i, p) => {
          const a = await send(p, 'PATCH', record(ws, 'people', `per_r${i}`), { manager_id: `per_t${i}` }, 'application/merge-patch+json');
          if (a.status !== 200) refusedAsDangling(a, i);
          return a;
        },
        (a) => a.status === 200,
      );
      assert.equal(counts.both, 0, `both answered 2xx in ${counts.both} of ${PAIRS} pairs (${JSON.stringify(counts)})`);
      assert.deepEqual(await danglingReferences(ws), []);
    });

    it('an import line naming the person being deleted: never both, nothing dangles', async () => {
      const ws = await workspaceWithSite();
      const counts = await race(
        ws,
        async (i) => assert.equal((await putTarget(ws, i)).status, 201),
        async (i, p) => {
          const line = JSON.stringify({
            register: 'people',
            op: 'upsert',
            record: person(`per_r${i}`, 'loc_hq', { manager_id: `per_t${i}` }),
          });
          const a = await send(p, 'POST', `/internal/v1/workspaces/${ws}/import`, line, 'application/x-ndjson');
          assert.equal(a.status, 200, `pair ${i}: the import answered ${a.status} ${JSON.stringify(a.json)}`);
          if (a.json.refused_count !== 0) assert.equal(a.json.refused[0].code, 'dangling_reference', JSON.stringify(a.json.refused));
          return a;
        },
        (a) => a.status === 200 && a.json.refused_count === 0,
      );
      assert.equal(counts.both, 0, `both succeeded in ${counts.both} of ${PAIRS} pairs (${JSON.stringify(counts)})`);
      assert.deepEqual(await danglingReferences(ws), []);
    });

    it('asset.assign to the person being deleted: never both, no asset assigned to a deleted person', async () => {
      const ws = await workspaceWithSite();
      const counts = await race(
        ws,
        async (i) => {
          assert.equal((await putTarget(ws, i)).status, 201);
          assert.equal((await send(i % 2, 'PUT', record(ws, 'assets', `ast_r${i}`), asset(`ast_r${i}`))).status, 201);
        },
        async (i, p) => {
          const a = await send(p, 'POST', '/internal/v1/actions/asset.assign', {
            workspace_id: ws,
            asset: `ast_r${i}`,
            person: `per_t${i}`,
          });
          if (a.status !== 200)
            assert.equal(a.json.code, 'not_found', `pair ${i}: the action answered ${a.status} ${JSON.stringify(a.json)}`);
          return a;
        },
        (a) => a.status === 200,
      );
      assert.equal(counts.both, 0, `both succeeded in ${counts.both} of ${PAIRS} pairs (${JSON.stringify(counts)})`);
      assert.deepEqual(await danglingReferences(ws), []);
    });

    /**
     * A session of its own holding row locks, as a concurrent transaction would. Its deadlock
     * check comes long after the server's (1 s), so the server's transaction is always the victim.
     */
    async function holding(run: (c: pg.Client) => Promise<void>): Promise<void> {
      const c = new pg.Client({ connectionString: h.databaseUrl });
      await c.connect();
      try {
        await c.query(`SET deadlock_timeout = '20s'`);
        await c.query('BEGIN');
        await run(c);
      } finally {
        await c.query('ROLLBACK').catch(() => undefined);
        await c.end();
      }
    }
    const lockWaits = async () =>
      Number(
        (
          await sql<{ n: string }>`SELECT count(*) AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(h.services.database.db)
        ).rows[0]?.n,
      );
    const deadlocks = async () =>
      Number(
        (
          await sql<{ n: string }>`SELECT deadlocks AS n FROM pg_stat_database WHERE datname = current_database()`.execute(
            h.services.database.db,
          )
        ).rows[0]?.n,
      );
    const lockRow = (c: pg.Client, ws: string, id: string, mode: string) =>
      c.query(`SELECT id FROM records WHERE workspace_id = $1 AND id = $2 ${mode}`, [ws, id]);
    const untilWaiting = async (n: number) => {
      while ((await lockWaits()) < n) await new Promise((r) => setTimeout(r, 10));
    };

    it('a PATCH that PostgreSQL ends as the victim of a deadlock is run again, and succeeds', {
      skip: dialect === 'sqlite' && 'SQLite: one writer, no deadlock',
    }, async () => {
      const ws = await workspaceWithSite();
      for (const id of ['per_a', 'per_r']) assert.equal((await send(0, 'PUT', record(ws, 'people', id), person(id, 'loc_hq'))).status, 201);
      const before = await deadlocks();
      let patched: Promise<unknown> | undefined;
      await holding(async (c) => {
        // As a delete of per_a would hold it; the PATCH takes per_r and waits for per_a ...
        await lockRow(c, ws, 'per_a', 'FOR UPDATE');
        patched = patchRecord(h.services, ws, registerNamed('people'), 'per_r', { manager_id: 'per_a' });
        patched.catch(() => undefined);
        await untilWaiting(1);
        // ... and this session then waits for per_r: a cycle. The PATCH's deadlock check runs
        // first and PostgreSQL ends it; this statement then gets the row.
        await lockRow(c, ws, 'per_r', 'FOR UPDATE');
      });
      // Rolled back: the PATCH's second run finds per_a there.
      await patched;
      assert.equal(await deadlocks(), before + 1, 'one deadlock was detected');
      const stored = await send(1, 'GET', record(ws, 'people', 'per_r'));
      assert.equal(stored.json.manager_id, 'per_a');
    });

    it('an import batch that PostgreSQL ends as the victim of a deadlock stops the import with 409 conflict', {
      skip: dialect === 'sqlite' && 'SQLite: one writer, no deadlock',
    }, async () => {
      const ws = await workspaceWithSite();
      for (const id of ['per_a', 'per_b']) assert.equal((await send(0, 'PUT', record(ws, 'people', id), person(id, 'loc_hq'))).status, 201);
      const body = [
        JSON.stringify({ register: 'people', op: 'upsert', record: person('per_b', 'loc_hq', { job_title: 'Lead' }) }),
        JSON.stringify({ register: 'people', op: 'delete', id: 'per_a' }),
      ].join('\n');
      let answer: Promise<Answer> | undefined;
      await holding(async (c) => {
        // A write of per_b holds it; the batch (it deletes, so FOR UPDATE) takes per_a, waits for per_b ...
        await lockRow(c, ws, 'per_b', 'FOR NO KEY UPDATE');
        answer = send(0, 'POST', `/internal/v1/workspaces/${ws}/import`, body, 'application/x-ndjson');
        await untilWaiting(1);
        // ... and the write then names per_a: a cycle, the batch its victim.
        await lockRow(c, ws, 'per_a', 'FOR KEY SHARE');
      });
      const a = await (answer as Promise<Answer>);
      assert.equal(a.status, 409, JSON.stringify(a.json));
      assert.equal(a.json.code, 'conflict');
      assert.match(a.json.detail, /running the same import again converges/);
      // Nothing of the batch was applied, and running it again does it.
      assert.equal((await send(1, 'GET', record(ws, 'people', 'per_a'))).status, 200);
      const again = await send(1, 'POST', `/internal/v1/workspaces/${ws}/import`, body, 'application/x-ndjson');
      assert.equal(again.status, 200);
      assert.equal(again.json.refused_count, 0);
      assert.equal((await send(1, 'GET', record(ws, 'people', 'per_a'))).status, 404);
    });
  });
}
