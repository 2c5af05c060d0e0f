/**
 * The deletions feed (`GET /api/v1/{register}/deletions`) as a consumer relies on it: every
 * deletion path (internal DELETE, an import's `op: delete`, `wsops delete`) writes its tombstone
 * in the transaction of the delete and nothing else; a record written again under a deleted id
 * leaves the feed and a second deletion brings it back later; `since` and the retention horizon
 * (WSOPS_DELETION_RETENTION_DAYS, with the injected clock) and the hourly pruning. The rules every
 * register shares (scope, limit, cursors, paging) are generated in cross-cutting.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { deleteRecord } from '../../src/actions/correct.js';
import { pruneTombstonesPastRetention } from '../../src/read/deletions-retention.js';
import { importRecords } from '../../src/writes/import.js';
import { DIALECTS } from '../helpers/databases.js';
import type { Harness } from '../helpers/harness.js';
import { createWriter, person, site, type Writer } from '../writes/helpers.js';

const DAY_MS = 86_400_000;
const upsertLine = (register: string, record: Record<string, unknown>) => JSON.stringify({ register, op: 'upsert', record });
const deleteLine = (register: string, id: string) => JSON.stringify({ register, op: 'delete', id });
/** An import's body, as the import reads it: a stream of chunks. */
async function* ndjson(...lines: string[]): AsyncGenerator<string> {
  yield `${lines.join('\n')}\n`;
}

for (const dialect of DIALECTS) {
  describe(`deletions feed [${dialect}]`, () => {
    let w: Writer;
    let h: Harness;
    before(async () => {
      w = await createWriter(dialect);
      h = w.h;
    });
    after(async () => {
      await w.internal.close();
      await h.close();
    });

    /** A workspace of its own (no seed) with a site, and a key. */
    async function fresh(): Promise<{ ws: string; key: string }> {
      const ws = await h.workspace({ seed: false });
      assert.equal((await w.write('PUT', `${ws}/locations/loc_hq`, site('loc_hq'))).status, 201);
      return { ws, key: (await h.key(ws)).key };
    }

    async function feed(key: string, register: string, query = ''): Promise<{ id: string; deleted_at: string }[]> {
      const res = await h.get(`/api/v1/${register}/deletions${query ? `?${query}` : ''}`, key);
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.has_more, false);
      return res.json.data;
    }

    const eventCount = async () =>
      Number(
        (
          await h.services.database.db
            .selectFrom('events')
            .select((e) => e.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    it('every deletion path writes a tombstone: internal DELETE, an import line, wsops delete; the record leaves list and detail and no event is sent', async () => {
      const { ws, key } = await fresh();
      for (const id of ['per_api', 'per_import', 'per_cli', 'per_kept']) {
        assert.equal((await w.write('PUT', `${ws}/people/${id}`, person(id, 'loc_hq'))).status, 201);
      }
      const events = await eventCount();
      h.clock.advance(1000);
      const apiAt = new Date(h.clock()).toISOString();
      assert.equal((await w.write('DELETE', `${ws}/people/per_api`)).status, 204);
      h.clock.advance(1000);
      const report = await importRecords(h.services, ws, ndjson(deleteLine('people', 'per_import')), { actor: 'operator' });
      assert.equal(report.refused_count, 0);
      h.clock.advance(1000);
      await deleteRecord(h.services, ws, 'people', 'per_cli');

      const tombstones = await feed(key, 'people');
      assert.deepEqual(
        tombstones.map((t) => t.id),
        ['per_api', 'per_import', 'per_cli'],
        'oldest first',
      );
      assert.equal(tombstones[0]?.deleted_at, apiAt, 'deleted_at is the time of the delete, ISO 8601 with milliseconds');
      for (const t of tombstones) assert.deepEqual(Object.keys(t), ['id', 'deleted_at']);
      assert.equal(await eventCount(), events, 'a deletion emits nothing');
      const list = await h.get('/api/v1/people?limit=1000', key);
      assert.deepEqual(
        list.json.data.map((p: { id: string }) => p.id),
        ['per_kept'],
      );
      assert.equal((await h.get('/api/v1/people/per_cli', key)).status, 404);
      assert.deepEqual(await feed(key, 'locations'), [], "another register's feed is its own");
    });

    it('a delete refused by its precondition, and a rolled-back import, leave no tombstone', async () => {
      const { ws, key } = await fresh();
      assert.equal((await w.write('PUT', `${ws}/people/per_a`, person('per_a', 'loc_hq'))).status, 201);
      const refused = await w.write('DELETE', `${ws}/people/per_a`, undefined, { 'if-match': '"1999-01-01T00:00:00.000Z"' });
      assert.equal(refused.status, 412);
      const atomic = await importRecords(
        h.services,
        ws,
        ndjson(deleteLine('people', 'per_a'), upsertLine('people', person('per_b', 'loc_nowhere'))),
        { actor: 'operator', atomic: true },
      );
      assert.equal(atomic.committed, false);
      assert.deepEqual(await feed(key, 'people'), []);
      assert.equal((await h.get('/api/v1/people/per_a', key)).status, 200);
    });

    it('delete, recreate, delete: the feed holds the id only while it is deleted, and the second deletion is later than the re-created record', async () => {
      const { ws, key } = await fresh();
      const first = await w.write('PUT', `${ws}/people/per_x`, person('per_x', 'loc_hq'));
      // The clock does not move: the rule must hold within one millisecond too.
      assert.equal((await w.write('DELETE', `${ws}/people/per_x`)).status, 204);
      const [t1] = await feed(key, 'people');
      assert.ok(t1 && t1.deleted_at > first.json.updated_at, 'deleted_at is later than the last updated_at');

      const recreated = await w.write('PUT', `${ws}/people/per_x`, person('per_x', 'loc_hq', { job_title: 'Returned' }));
      assert.equal(recreated.status, 201);
      assert.deepEqual(await feed(key, 'people'), [], 'written again: no tombstone wins over it');

      h.clock.advance(5);
      assert.equal((await w.write('DELETE', `${ws}/people/per_x`)).status, 204);
      const [t2] = await feed(key, 'people');
      assert.equal(t2?.id, 'per_x');
      assert.ok(t2 && t2.deleted_at > recreated.json.updated_at && t2.deleted_at > t1.deleted_at);
      assert.deepEqual(await feed(key, 'people', `since=${encodeURIComponent(t1.deleted_at)}`), [t2], 'a consumer past t1 sees t2');

      // Re-created by an import line: the same rule.
      const report = await importRecords(h.services, ws, ndjson(upsertLine('people', person('per_x', 'loc_hq'))), { actor: 'operator' });
      assert.equal(report.refused_count, 0);
      assert.deepEqual(await feed(key, 'people'), []);
    });

    it('since: strictly after, the format and 400s of updated_since; before the retention horizon a 400 that says to walk in full', async () => {
      const { ws, key } = await fresh();
      for (const id of ['per_1', 'per_2', 'per_3']) {
        assert.equal((await w.write('PUT', `${ws}/people/${id}`, person(id, 'loc_hq'))).status, 201);
      }
      const stamps: string[] = [];
      for (const id of ['per_1', 'per_2', 'per_3']) {
        h.clock.advance(60_000);
        await deleteRecord(h.services, ws, 'people', id);
        stamps.push(new Date(h.clock()).toISOString());
      }
      assert.deepEqual(
        (await feed(key, 'people', `since=${encodeURIComponent(stamps[0] as string)}`)).map((t) => t.id),
        ['per_2', 'per_3'],
      );
      // The same instant with an offset, and with `+` sent unencoded (a space), as updated_since accepts.
      const offset = new Date(Date.parse(stamps[1] as string) + 3600_000).toISOString().replace('Z', '+01:00');
      assert.deepEqual(
        (await feed(key, 'people', `since=${encodeURIComponent(offset)}`)).map((t) => t.id),
        ['per_3'],
      );
      assert.deepEqual(
        (await feed(key, 'people', `since=${offset}`)).map((t) => t.id),
        ['per_3'],
      );
      for (const bad of ['yesterday', '2026-02-30T00:00:00Z', '2026-11-22T08:00:00']) {
        const res = await h.get(`/api/v1/people/deletions?since=${encodeURIComponent(bad)}`, key);
        assert.equal(res.status, 400, bad);
        assert.equal(res.json.code, 'invalid_parameter');
        assert.equal(res.json.param, 'since');
      }

      const days = h.services.config.deletionRetentionDays;
      const horizon = h.clock() - days * DAY_MS;
      const inside = await h.get(`/api/v1/people/deletions?since=${new Date(horizon).toISOString()}`, key);
      assert.equal(inside.status, 200, 'the horizon itself is still answered');
      const beyond = await h.get(`/api/v1/people/deletions?since=${new Date(horizon - 1).toISOString()}`, key);
      assert.equal(beyond.status, 400);
      assert.match(String(beyond.headers['content-type']), /^application\/problem\+json/);
      assert.equal(beyond.json.code, 'deletions_beyond_retention');
      assert.equal(beyond.json.param, 'since');
      assert.match(beyond.json.detail, /walk \/api\/v1\/people in full/);
      assert.match(beyond.json.detail, new RegExp(`${days} days`));
    });

    it('a walk whose since falls behind the horizon while it pages is refused on its next page', async () => {
      const { ws, key } = await fresh();
      for (const id of ['per_1', 'per_2']) {
        assert.equal((await w.write('PUT', `${ws}/people/${id}`, person(id, 'loc_hq'))).status, 201);
        h.clock.advance(1000);
        await deleteRecord(h.services, ws, 'people', id);
      }
      const days = h.services.config.deletionRetentionDays;
      const since = new Date(h.clock() - days * DAY_MS + 10_000).toISOString();
      const first = await h.get(`/api/v1/people/deletions?limit=1&since=${since}`, key);
      assert.equal(first.status, 200);
      assert.equal(first.json.has_more, true);
      h.clock.advance(20_000);
      const next = await h.get(`/api/v1/people/deletions?limit=1&since=${since}&cursor=${encodeURIComponent(first.json.next_cursor)}`, key);
      assert.equal(next.status, 400);
      assert.equal(next.json.code, 'deletions_beyond_retention');
    });

    it('past the retention a tombstone is no longer served, and the hourly pruning removes it, and only it', async () => {
      const { ws, key } = await fresh();
      const longKey = (await h.key(ws, undefined, { days: 365 })).key;
      for (const id of ['per_old', 'per_new']) {
        assert.equal((await w.write('PUT', `${ws}/people/${id}`, person(id, 'loc_hq'))).status, 201);
      }
      await deleteRecord(h.services, ws, 'people', 'per_old');
      const days = h.services.config.deletionRetentionDays;
      h.clock.advance(2 * DAY_MS);
      await deleteRecord(h.services, ws, 'people', 'per_new');
      h.clock.advance((days - 1) * DAY_MS);
      assert.deepEqual(
        (await feed(longKey, 'people')).map((t) => t.id),
        ['per_new'],
        'not yet pruned, but past the horizon: not served',
      );
      const pruned = await pruneTombstonesPastRetention(h.services);
      assert.ok(pruned >= 1);
      const left = await h.services.database.db
        .selectFrom('record_tombstones')
        .select('id')
        .where('workspace_id', '=', ws)
        .orderBy('id')
        .execute();
      assert.deepEqual(
        left.map((r) => r.id),
        ['per_new'],
      );
      h.clock.advance(-(days + 1) * DAY_MS);
      assert.deepEqual(
        (await feed(key, 'people')).map((t) => t.id),
        ['per_new'],
      );
    });
  });
}
