/**
 * The statements a domain action sends to PostgreSQL, each a round trip in its transaction (ADR
 * 42): the module check shares a statement with the endpoint lookup, and the audit entry, the
 * events and their delivery jobs are written by one statement at the end. PostgreSQL only: SQLite
 * runs in the process, where a statement costs no round trip.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { Fixtures } from './helpers.js';

for (const dialect of DIALECTS) {
  describe(`statements of a domain action [${dialect}]`, { skip: dialect === 'sqlite' && 'SQLite: no round trips' }, () => {
    let h: Harness;
    before(async () => {
      h = await createHarness(dialect);
    });
    after(() => h?.close());

    /**
     * The statements `fn` sends, but the announcement of its jobs (after the commit, on a session
     * of its own); `named`: those sent as named (prepared) statements.
     */
    const statements = async (fn: () => Promise<unknown>, named: string[] = []): Promise<string[]> => {
      const sent: string[] = [];
      const query = pg.Client.prototype.query;
      pg.Client.prototype.query = function (this: pg.Client, ...args: Parameters<typeof query>) {
        const config = typeof args[0] === 'string' ? { text: args[0] } : (args[0] as { text?: string; name?: string });
        const text = config.text?.replace(/\s+/g, ' ').slice(0, 60);
        if (text && !text.startsWith('NOTIFY')) {
          sent.push(text);
          if (config.name) named.push(text);
        }
        return query.apply(this, args);
      } as typeof query;
      try {
        await fn();
      } finally {
        pg.Client.prototype.query = query;
      }
      return sent;
    };

    it('asset.assign is 8 statements and asset.return 7, transaction included: the audit entry, event and job in one insert', async () => {
      const fx = await Fixtures.create(h);
      await fx.endpoint();
      const asset = await fx.first('assets', (a) => a.status === 'AVAILABLE');
      const person = await fx.activePerson();
      const assign = await statements(() => fx.act('asset.assign', { asset: asset.id, person: person.id }));
      assert.equal(assign.length, 8, assign.join('\n'));
      const back = await statements(() => fx.act('asset.return', { asset: asset.id }));
      assert.equal(back.length, 7, back.join('\n'));
      assert.deepEqual((await fx.events()).map((e) => e.type).sort(), ['asset.assigned', 'asset.returned']);
      const jobs = await h.services.database.db.selectFrom('delivery_jobs').select('event_id').where('workspace_id', '=', fx.ws).execute();
      assert.equal(jobs.length, 2, 'one job per event');
      assert.deepEqual(await fx.audit(), [
        { actor: 'cli', action: 'action.asset.assign', target: asset.id },
        { actor: 'cli', action: 'action.asset.return', target: asset.id },
      ]);
    });

    it('every statement of an action but BEGIN and COMMIT is a prepared (named) statement: parsed and planned once per session', async () => {
      const fx = await Fixtures.create(h);
      await fx.endpoint();
      const asset = await fx.first('assets', (a) => a.status === 'AVAILABLE');
      const person = await fx.activePerson();
      const named: string[] = [];
      const sent = await statements(() => fx.act('asset.assign', { asset: asset.id, person: person.id }), named);
      assert.deepEqual(
        sent.filter((text) => !named.includes(text)),
        ['begin', 'commit'],
      );
    });
  });
}
