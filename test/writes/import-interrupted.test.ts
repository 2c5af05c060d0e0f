/**
 * An import whose process dies mid-way does not read as running forever: a real `wsops import`
 * killed with SIGKILL while it waits for more input is shown as interrupted, by `wsops imports`
 * and on the console's Data page, with the lines and counts of the batches it had committed,
 * which are exactly the records stored. An import whose process still runs is left alone, and one
 * run on another machine is taken as interrupted once it has not shown it was alive for long.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { adapterOf } from '../../src/store/database.js';
import { STALE_MS, THIS_PROCESS } from '../../src/writes/import-runs.js';
import { signedInAdmin } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness, TEST_SECRET } from '../helpers/harness.js';
import { BIN, until } from '../helpers/processes.js';
import { site } from './helpers.js';

const cliEnv = (url: string) => ({ ...process.env, WSOPS_DATABASE_URL: url, WSOPS_SECRET: TEST_SECRET, WSOPS_LOG_LEVEL: 'silent' });

function wsops(url: string, args: readonly string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { env: cliEnv(url), encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const upsert = (n: number) => JSON.stringify({ register: 'locations', op: 'upsert', record: site(`loc_k${n}`, `Site ${n}`) });

for (const dialect of DIALECTS) {
  describe(`an import whose process is gone [${dialect}]`, () => {
    let h: Harness;
    before(async () => {
      h = await createHarness(dialect);
    });
    after(() => h.close());

    it('a `wsops import` killed with SIGKILL mid-way reads as interrupted, with the lines and counts it had committed, in the CLI and the console', async () => {
      const ws = await h.workspace({ seed: false });
      const batch = adapterOf(dialect).importBatchLines;
      // Two whole batches and part of a third go in; the import then waits for the rest of its input.
      const child = spawn(process.execPath, [BIN, 'import', '--workspace', ws, '-'], {
        env: cliEnv(h.databaseUrl),
        stdio: ['pipe', 'ignore', 'pipe'],
      });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      const sent = Array.from({ length: 2 * batch + batch / 2 }, (_, i) => upsert(i + 1));
      child.stdin.write(`${sent.join('\n')}\n`);
      const db = h.services.database.db;
      const row = () => db.selectFrom('record_imports').selectAll().where('workspace_id', '=', ws).executeTakeFirst();
      await until(async () => (await row())?.lines === 2 * batch, 60_000, 'two batches committed');
      child.kill('SIGKILL');
      await exited;

      const left = await row();
      assert.equal(left?.finished_at, null, 'the killed process recorded no finish');
      const stored = await db
        .selectFrom('records')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('workspace_id', '=', ws)
        .executeTakeFirstOrThrow();
      assert.equal(Number(stored.n), 2 * batch, 'whole batches only');

      const listed = wsops(h.databaseUrl, ['imports', '--workspace', ws, '--json']);
      assert.equal(listed.status, 0, listed.stderr);
      const [first, ...rest] = JSON.parse(listed.stdout);
      assert.equal(rest.length, 0);
      assert.equal(first.state, 'interrupted');
      assert.equal(first.lines, 2 * batch, 'the lines it had applied');
      assert.deepEqual(first.counts.locations.upsert, { created: 2 * batch, updated: 0, unchanged: 0 }, 'its counts are what is stored');
      assert.ok(first.finished_at);
      assert.match(first.note, /run the same import again: it converges/);

      const human = wsops(h.databaseUrl, ['imports', '--workspace', ws]);
      assert.match(human.stdout, new RegExp(`${first.id}\\s+interrupted\\s+\\S+\\s+${2 * batch}\\b`));

      const admin = await signedInAdmin(h, ws);
      const page = await admin.get('/console/data');
      assert.equal(page.status, 200);
      assert.match(page.body, /Interrupted/);
      assert.doesNotMatch(page.body, /Running|Unfinished/);

      const audit = await db.selectFrom('audit_events').selectAll().where('workspace_id', '=', ws).where('target', '=', first.id).execute();
      assert.equal(audit.length, 1, 'marked once, audited once');
      assert.equal(JSON.parse(audit[0]?.detail ?? '{}').interrupted, true);

      // Running the same import again converges: everything present, nothing twice.
      const again = spawnSync(process.execPath, [BIN, 'import', '--workspace', ws, '--json', '-'], {
        env: cliEnv(h.databaseUrl),
        input: `${sent.join('\n')}\n`,
        encoding: 'utf8',
      });
      assert.equal(again.status, 0, again.stderr);
      assert.deepEqual(JSON.parse(again.stdout).counts.locations.upsert, { created: batch / 2, updated: 0, unchanged: 2 * batch });
    });

    it('an import whose process runs is left running; one from another machine is interrupted once not seen alive for long', async () => {
      const ws = await h.workspace({ seed: false });
      const db = h.services.database.db;
      const at = (ms: number) => new Date(ms).toISOString();
      const now = h.clock();
      const base = { workspace_id: ws, actor: 'operator', finished_at: null, dry_run: 0, atomic: 0, lines: 0, refused: 0, report: '{}' };
      await db
        .insertInto('record_imports')
        .values([
          { ...base, id: 'imp_here', started_at: at(now - 1000), owner: THIS_PROCESS, alive_at: at(now - 1000) },
          { ...base, id: 'imp_elsewhere', started_at: at(now - 2000), owner: 'other-host pid:[1] 42', alive_at: at(now - 1000) },
        ])
        .execute();
      const states = async () => {
        const r = wsops(h.databaseUrl, ['imports', '--workspace', ws, '--json']);
        assert.equal(r.status, 0, r.stderr);
        return Object.fromEntries((JSON.parse(r.stdout) as { id: string; state: string }[]).map((i) => [i.id, i.state]));
      };
      // Read by another process of this machine (the CLI) with the real clock, far after the
      // harness's: the running import here must not be judged by its age alone.
      await db
        .updateTable('record_imports')
        .set({ alive_at: at(Date.now()) })
        .execute();
      assert.deepEqual(await states(), { imp_here: 'running', imp_elsewhere: 'running' });
      // The other machine's import stops showing it is alive.
      await db
        .updateTable('record_imports')
        .set({ alive_at: at(Date.now() - STALE_MS - 60_000) })
        .where('id', '=', 'imp_elsewhere')
        .execute();
      assert.deepEqual(await states(), { imp_here: 'running', imp_elsewhere: 'interrupted' });
    });
  });
}
