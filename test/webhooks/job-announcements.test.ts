/**
 * PostgreSQL's workers learn of committed jobs by `NOTIFY wsops_jobs`, sent by the process that
 * wrote them after its commit (store/dialects/postgres-jobs.ts), no longer by a trigger inside the
 * writing transaction (migration 0033, ADR 42). SQLite's workers poll: nothing is announced.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { JOBS_CHANNEL } from '../../src/store/dialects/postgres-jobs.js';
import { Fixtures } from '../actions/helpers.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness, TEST_SECRET } from '../helpers/harness.js';
import { runWsops, until } from '../helpers/processes.js';

for (const dialect of DIALECTS) {
  describe(`committed jobs are announced [${dialect}]`, { skip: dialect === 'sqlite' && 'SQLite: workers poll' }, () => {
    let h: Harness;
    let listener: pg.Client;
    /** For each notification: how many jobs of the workspace were committed when it came. */
    const heard: number[] = [];
    let ws = '';

    before(async () => {
      h = await createHarness(dialect);
      listener = new pg.Client({ connectionString: h.databaseUrl });
      await listener.connect();
      listener.on('notification', (n) => {
        if (n.channel !== JOBS_CHANNEL) return;
        const count = h.services.database.db
          .selectFrom('delivery_jobs')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('workspace_id', '=', ws)
          .executeTakeFirstOrThrow();
        void count.then((r) => heard.push(Number(r.n)));
      });
      await listener.query(`LISTEN ${JOBS_CHANNEL}`);
    });
    after(async () => {
      await listener?.end();
      await h?.close();
    });

    it('an action committed by another process (wsops act) announces its job, after its commit', async () => {
      const fx = await Fixtures.create(h);
      ws = fx.ws;
      await fx.endpoint();
      const person = await fx.activePerson();
      const asset = await fx.first('assets', (a) => a.status === 'AVAILABLE');
      await runWsops(['act', 'asset.assign', '--workspace', ws, '--asset', asset.id, '--person', person.id], {
        WSOPS_DATABASE_URL: h.databaseUrl,
        WSOPS_SECRET: TEST_SECRET,
        WSOPS_LOG_LEVEL: 'silent',
      });
      // Without the announcement a worker would find the job only at its next idle poll (1 s).
      await until(() => heard.some((n) => n === 1), 30_000, 'a notification on wsops_jobs once the job was committed');
    });

    it('the writing transaction itself notifies no one: delivery_jobs has no NOTIFY trigger (its commit is not serialized)', async () => {
      const { rows } = await listener.query(`SELECT tgname FROM pg_trigger WHERE tgrelid = 'delivery_jobs'::regclass AND NOT tgisinternal`);
      assert.deepEqual(rows, []);
    });
  });
}
