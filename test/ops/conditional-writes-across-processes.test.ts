/**
 * The system of record's conditional writes and its imports, raced across two real API
 * processes on one database through the internal listener (docs/guarantees.md): writes with
 * one ETag in If-Match (exactly one wins, the others get 412), creations with If-None-Match: *
 * (exactly one creates), and one NDJSON import sent to both processes at once and then again
 * (README, import: the same file imported twice changes nothing the second time; an import
 * stopped or repeated converges).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ApiProcesses } from '../helpers/api-processes.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { type HttpAnswer, operatorRequest, Rounds, spread, startRacers } from '../helpers/races.js';
import { site, vendor } from '../writes/helpers.js';

const ROUNDS = 5;
const LINES = 300;

const statuses = (answers: readonly HttpAnswer[]) => answers.map((a) => a.status).join(' ');
const ok = (a: HttpAnswer) => a.status >= 200 && a.status < 300;
interface ImportReport {
  committed: boolean;
  refused_count: number;
  counts: Record<string, { upsert: { created: number; updated: number; unchanged: number } }>;
}

for (const dialect of DIALECTS) {
  describe(`conditional writes and imports across two API processes [${dialect}]`, () => {
    let h: Harness;
    let procs: ApiProcesses;
    let ws: string;
    before(async () => {
      h = await createHarness(dialect);
      procs = await startRacers(h.databaseUrl);
      ws = await h.workspace({ seed: false });
    });
    after(async () => {
      await procs?.stop();
      await h?.close();
    });

    const recordUrl = (url: string, path: string) => `${url}/internal/v1/workspaces/${ws}/${path}`;
    const send = (url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      operatorRequest(recordUrl(url, path), procs.operatorToken, {
        method,
        body: body === undefined ? undefined : JSON.stringify(body),
        contentType: method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
        headers,
      });
    const first = () => procs.internalUrls[0] as string;

    /** Stores a vendor and returns its ETag. */
    async function stored(id: string): Promise<string> {
      const put = await send(first(), 'PUT', `vendors/${id}`, vendor(id));
      assert.equal(put.status, 201, put.body);
      return put.etag;
    }

    it('If-Match: eight PATCHes and PUTs of one record with one ETag at once over both processes: exactly one 2xx, the others 412', async () => {
      const rounds = new Rounds(ROUNDS);
      for (let r = 0; r < ROUNDS; r++) {
        const id = `ven_match_${r}`;
        const etag = await stored(id);
        const answers = await spread(8, procs.internalUrls, (url, i) =>
          i % 2 === 0
            ? send(url, 'PATCH', `vendors/${id}`, { name: `Writer ${i}` }, { 'if-match': etag })
            : send(url, 'PUT', `vendors/${id}`, vendor(id, { name: `Writer ${i}` }), { 'if-match': etag }),
        );
        const won = answers.filter(ok);
        const refused = answers.filter((a) => a.status === 412).length;
        const now = await send(first(), 'GET', `vendors/${id}`);
        const winner = won.length === 1 ? JSON.parse((won[0] as HttpAnswer).body).name : undefined;
        rounds.record(
          r,
          won.length === 1 && refused === 7 && JSON.parse(now.body).name === winner,
          `${won.length} won, ${refused} got 412, stored name ${JSON.parse(now.body).name}; statuses ${statuses(answers)}`,
        );
      }
      assert.equal(rounds.broken.length, 0, rounds.summary('If-Match writes'));
    });

    it('If-Match: a DELETE and PATCHes of one record with one ETag at once: exactly one 2xx', async () => {
      const rounds = new Rounds(ROUNDS);
      for (let r = 0; r < ROUNDS; r++) {
        const id = `ven_gone_${r}`;
        const etag = await stored(id);
        const answers = await spread(8, procs.internalUrls, (url, i) =>
          i % 2 === 0
            ? send(url, 'DELETE', `vendors/${id}`, undefined, { 'if-match': etag })
            : send(url, 'PATCH', `vendors/${id}`, { name: `Writer ${i}` }, { 'if-match': etag }),
        );
        const won = answers.filter(ok).length;
        const refused = answers.filter((a) => a.status === 412 || a.status === 404).length;
        rounds.record(r, won === 1 && refused === 7, `${won} won; statuses ${statuses(answers)}`);
      }
      assert.equal(rounds.broken.length, 0, rounds.summary('If-Match delete'));
    });

    it('If-None-Match: *: eight creations of one new id at once over both processes create it once; the others get 412', {}, async () => {
      const rounds = new Rounds(ROUNDS);
      for (let r = 0; r < ROUNDS; r++) {
        const id = `ven_new_${r}`;
        const answers = await spread(8, procs.internalUrls, (url, i) =>
          send(url, 'PUT', `vendors/${id}`, vendor(id, { name: `Creator ${i}` }), { 'if-none-match': '*' }),
        );
        const created = answers.filter((a) => a.status === 201);
        const refused = answers.filter((a) => a.status === 412).length;
        const now = JSON.parse((await send(first(), 'GET', `vendors/${id}`)).body).name;
        const winner = created.length === 1 ? JSON.parse((created[0] as HttpAnswer).body).name : undefined;
        rounds.record(
          r,
          created.length === 1 && refused === 7 && now === winner,
          `${created.length} created, ${refused} got 412, stored ${now}; statuses ${statuses(answers)}`,
        );
      }
      assert.equal(rounds.broken.length, 0, rounds.summary('If-None-Match: * creations'));
    });

    /** An import of LINES new records (locations, and vendors) as NDJSON. */
    function importFile(tag: string): { body: string; ids: string[] } {
      const lines: string[] = [];
      const ids: string[] = [];
      for (let i = 0; i < LINES; i++) {
        const record = i % 2 === 0 ? site(`loc_${tag}_${i}`, `Office ${i}`) : vendor(`ven_${tag}_${i}`, { name: `Vendor ${i}` });
        ids.push(record.id);
        lines.push(JSON.stringify({ register: i % 2 === 0 ? 'locations' : 'vendors', op: 'upsert', record }));
      }
      return { body: `${lines.join('\n')}\n`, ids };
    }

    const postImport = (url: string, body: string) =>
      operatorRequest(`${url}/internal/v1/workspaces/${ws}/import`, procs.operatorToken, {
        method: 'POST',
        body,
        contentType: 'application/x-ndjson',
      });

    const storedRows = (ids: readonly string[]) =>
      h.services.database.db
        .selectFrom('records')
        .select(['id', 'doc', 'created_at'])
        .where('workspace_id', '=', ws)
        .where('id', 'in', ids)
        .execute();
    const storedDocs = async (ids: readonly string[]) => new Map((await storedRows(ids)).map((r) => [r.id, r.doc]));

    it('one import sent to both processes at once applies every line, and the same file imported again changes nothing', {}, async () => {
      const rounds = new Rounds(ROUNDS);
      for (let r = 0; r < ROUNDS; r++) {
        const file = importFile(`imp${r}`);
        const answers = await spread(2, procs.internalUrls, (url) => postImport(url, file.body));
        const reports = answers.map((a) => (a.status === 200 ? (JSON.parse(a.body) as ImportReport) : undefined));
        const whole = reports.every((x) => x?.committed && x.refused_count === 0);
        const docs = await storedDocs(file.ids);
        // A row whose document says another creation time than its column: written by both imports.
        const torn = (await storedRows(file.ids)).filter((row) => JSON.parse(row.doc).created_at !== row.created_at).length;
        const again = await postImport(first(), file.body);
        const report = again.status === 200 ? (JSON.parse(again.body) as ImportReport) : undefined;
        const counts = Object.values(report?.counts ?? {}).map((c) => c.upsert);
        const unchanged = counts.reduce((n, c) => n + c.unchanged, 0);
        const changed = counts.reduce((n, c) => n + c.created + c.updated, 0);
        const after = await storedDocs(file.ids);
        const same = file.ids.every((id) => docs.get(id) !== undefined && docs.get(id) === after.get(id));
        rounds.record(
          r,
          whole && docs.size === LINES && unchanged === LINES && changed === 0 && same,
          `statuses ${statuses(answers)}, ${docs.size} records stored (${torn} whose document's created_at is not the row's); the import again: ${changed} changed, ${unchanged} unchanged, documents ${same ? 'kept' : 'moved'}`,
        );
      }
      assert.equal(rounds.broken.length, 0, rounds.summary('imports at once'));
    });
  });
}
