/**
 * SCIM's guarantees hold across API processes (several hosts behind a load balancer, or `serve
 * --processes N`), because the database holds them: an identity provider retrying a POST after a
 * timeout makes one person (scim_people's unique userName key), two PATCHes of one User sent to
 * two processes both apply (each commits only if the User is as it read it, else reads again),
 * and a SCIM DELETE racing a write that names the person never leaves a dangling reference.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type ApiProcesses, startApiProcesses } from '../helpers/api-processes.js';
import { DIALECTS } from '../helpers/databases.js';
import { PATCH_OP, type ScimServer, startScimServer, USER } from './helpers.js';

const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

const user = (userName: string) => ({
  schemas: [USER],
  userName,
  name: { givenName: 'Grace', familyName: 'Hopper' },
  emails: [{ primary: true, value: userName, type: 'work' }],
  active: true,
});

for (const dialect of DIALECTS) {
  describe(`SCIM across two API processes [${dialect}]`, () => {
    let s: ScimServer;
    let p: ApiProcesses;
    /** Request `i` goes to process i mod 2. */
    const scim = async (i: number, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${p.publicUrls[i % p.publicUrls.length]}/scim/v2${path}`, {
        method,
        headers: { authorization: `Bearer ${s.token}`, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
      return { status: res.status, text, json: (text ? JSON.parse(text) : undefined) as any };
    };
    before(async () => {
      s = await startScimServer(dialect);
      p = await startApiProcesses(s.h.databaseUrl, 2);
    });
    after(async () => {
      await p?.stop();
      await s?.close();
    });

    it('sixteen POSTs of one userName at once, over both processes, make one person in each of ten rounds; the others are 409 uniqueness', async () => {
      for (let round = 0; round < 10; round++) {
        const userName = `Retry.${round}@Example.com`;
        const answers = await Promise.all(
          Array.from({ length: 16 }, (_, i) => scim(i, 'POST', '/Users', user(i % 3 === 0 ? userName.toLowerCase() : userName))),
        );
        const statuses = answers.map((a) => a.status).sort();
        assert.deepEqual(statuses, [201, ...Array(15).fill(409)], `round ${round}: ${answers.map((a) => a.text.slice(0, 120)).join('\n')}`);
        for (const refused of answers.filter((a) => a.status === 409)) assert.equal(refused.json.scimType, 'uniqueness');
        const found = await scim(round, 'GET', `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`);
        assert.equal(found.json.totalResults, 1, found.text);
      }
      const people = await s.h.services.database.db
        .selectFrom('scim_people')
        .select('user_name_key')
        .where('workspace_id', '=', s.ws)
        .where('user_name_key', 'like', 'retry.%')
        .execute();
      assert.equal(people.length, 10);
    });

    it('PATCHes of one User sent at once to both processes all apply, those of its SCIM link (externalId, employeeNumber) too', async () => {
      for (let round = 0; round < 5; round++) {
        const created = await scim(round, 'POST', '/Users', user(`patched.${round}@example.com`));
        assert.equal(created.status, 201, created.text);
        const id = created.json.id as string;
        const patch = (i: number, path: string, value: string) =>
          scim(i, 'PATCH', `/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path, value }] });
        const answers = await Promise.all([
          patch(0, 'title', `Engineer ${round}`),
          patch(1, 'displayName', `G. Hopper ${round}`),
          patch(2, 'externalId', `okta-${round}`),
          patch(3, `${ENTERPRISE}:employeeNumber`, `E-${round}`),
        ]);
        for (const a of answers) assert.equal(a.status, 200, a.text);
        const read = await scim(round, 'GET', `/Users/${id}`);
        assert.equal(read.json.title, `Engineer ${round}`, read.text);
        assert.equal(read.json.displayName, `G. Hopper ${round}`, read.text);
        assert.equal(read.json.externalId, `okta-${round}`, read.text);
        assert.equal(read.json[ENTERPRISE]?.employeeNumber, `E-${round}`, read.text);
      }
    });

    it('a SCIM DELETE racing a PATCH that makes another User report to the deleted one: never a manager that is gone', async () => {
      for (let round = 0; round < 12; round++) {
        const manager = await scim(round, 'POST', '/Users', user(`manager.${round}@example.com`));
        const report = await scim(round + 1, 'POST', '/Users', user(`report.${round}@example.com`));
        assert.equal(manager.status, 201, manager.text);
        assert.equal(report.status, 201, report.text);
        const [deleted, patched] = await Promise.all([
          scim(round, 'DELETE', `/Users/${manager.json.id}`),
          scim(round + 1, 'PATCH', `/Users/${report.json.id}`, {
            schemas: [PATCH_OP],
            Operations: [{ op: 'replace', path: `${ENTERPRISE}:manager`, value: { value: manager.json.id } }],
          }),
        ]);
        assert.equal(deleted.status, 204, deleted.text);
        const stored = await s.h.services.database.db
          .selectFrom('records')
          .select('id')
          .where('workspace_id', '=', s.ws)
          .where('id', '=', manager.json.id)
          .executeTakeFirst();
        if (patched.status === 200) {
          // The PATCH won: the DELETE found the person named and kept it, INACTIVE.
          assert.ok(stored, `round ${round}: ${report.json.id} names ${manager.json.id}, which is gone`);
        } else {
          assert.equal(patched.status, 400, patched.text);
          assert.equal(stored, undefined);
        }
      }
    });
  });
}
