/**
 * An identity provider that retries a POST after a timeout, or sends two PATCHes of one user at
 * once, must not make two people with one userName or lose one of the changes: SCIM writes of a
 * workspace are applied one after the other.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DIALECTS } from '../helpers/databases.js';
import { PATCH_OP, type ScimServer, startScimServer, USER } from './helpers.js';

const user = (email: string) => ({
  schemas: [USER],
  userName: email,
  name: { givenName: 'Grace', familyName: 'Hopper' },
  emails: [{ primary: true, value: email, type: 'work' }],
  active: true,
});

for (const dialect of DIALECTS) {
  describe(`SCIM writes at the same moment [${dialect}]`, () => {
    let s: ScimServer;
    before(async () => {
      s = await startScimServer(dialect);
    });
    after(async () => s.close());

    it('eight POSTs of one userName at once create one person; the others are 409 uniqueness', async () => {
      const answers = await Promise.all(Array.from({ length: 8 }, () => s.scim('POST', '/Users', user('grace.hopper@example.com'))));
      assert.deepEqual(answers.map((a) => a.status).sort(), [201, 409, 409, 409, 409, 409, 409, 409]);
      for (const refused of answers.filter((a) => a.status === 409)) assert.equal(refused.json.scimType, 'uniqueness');
      const found = await s.scim('GET', `/Users?filter=${encodeURIComponent('userName eq "grace.hopper@example.com"')}`);
      assert.equal(found.json.totalResults, 1);
    });

    it('two PATCHes of one user at once both apply', async () => {
      const created = await s.scim('POST', '/Users', user('kathleen.booth@example.com'));
      assert.equal(created.status, 201, created.text);
      const id = created.json.id as string;
      const patch = (path: string, value: string) =>
        s.scim('PATCH', `/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path, value }] });
      const [a, b] = await Promise.all([patch('title', 'Engineer'), patch('displayName', 'K. Booth')]);
      assert.deepEqual([a.status, b.status], [200, 200], `${a.text} ${b.text}`);
      const read = await s.scim('GET', `/Users/${id}`);
      assert.equal(read.json.title, 'Engineer');
      assert.equal(read.json.displayName, 'K. Booth');
    });
  });
}
