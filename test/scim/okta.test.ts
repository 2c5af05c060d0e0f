/**
 * The request sequence Okta's SCIM 2.0 documentation shows for a provisioning app: look a user
 * up by userName, create it, read it, replace it whole (PUT), deactivate and reactivate it with
 * a value-only PATCH of active, then delete; the person follows in /api/v1/people each step.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DIALECTS } from '../helpers/databases.js';
import { ERROR, PATCH_OP, type ScimServer, startScimServer, USER } from './helpers.js';

const oktaUser = (email: string, given: string, family: string) => ({
  schemas: [USER],
  userName: email,
  name: { givenName: given, familyName: family },
  emails: [{ primary: true, value: email, type: 'work' }],
  displayName: `${given} ${family}`,
  locale: 'en-US',
  externalId: '00u1esetp7HDb1Qpj0h8',
  groups: [],
  password: '1mz050nq',
  active: true,
});

for (const dialect of DIALECTS) {
  describe(`Okta's provisioning sequence [${dialect}]`, () => {
    let s: ScimServer;
    before(async () => {
      s = await startScimServer(dialect);
    });
    after(async () => s.close());

    it('creates, reads, replaces, deactivates, reactivates and deletes a user, and /api/v1/people follows', async () => {
      const lookup = await s.scim(
        'GET',
        `/Users?filter=${encodeURIComponent('userName eq "ada.lovelace@example.com"')}&startIndex=1&count=100`,
      );
      assert.equal(lookup.status, 200);
      assert.match(lookup.headers.get('content-type') ?? '', /^application\/scim\+json/);
      assert.deepEqual([lookup.json.totalResults, lookup.json.Resources], [0, []]);

      const created = await s.scim('POST', '/Users', oktaUser('ada.lovelace@example.com', 'Ada', 'Lovelace'));
      assert.equal(created.status, 201, created.text);
      const id = created.json.id as string;
      assert.match(id, /^per_/);
      assert.equal(created.headers.get('location'), `${s.h.services.config.baseUrl}/scim/v2/Users/${id}`);
      assert.equal(created.json.userName, 'ada.lovelace@example.com');
      assert.equal(created.json.externalId, '00u1esetp7HDb1Qpj0h8');
      assert.equal(created.json.active, true);
      assert.equal('password' in created.json, false, 'a password is never stored or returned');

      const person = await s.api(`/people/${id}`);
      assert.equal(person.status, 200);
      assert.equal(person.json.work_email, 'ada.lovelace@example.com');
      assert.equal(person.json.display_name, 'Ada Lovelace');
      assert.equal(person.json.status, 'ACTIVE');
      assert.equal(person.json.location_id, s.locationId, 'placed at the token location');

      // Okta looks users up with the userName as the user typed it: case does not matter.
      const upper = await s.scim('GET', `/Users?filter=${encodeURIComponent('userName eq "ADA.Lovelace@EXAMPLE.com"')}`);
      assert.deepEqual(
        upper.json.Resources.map((u: { id: string }) => u.id),
        [id],
      );

      const read = await s.scim('GET', `/Users/${id}`);
      assert.equal(read.status, 200);
      assert.deepEqual(read.json.name, { givenName: 'Ada', familyName: 'Lovelace', formatted: 'Ada Lovelace' });

      // Okta updates a profile with a PUT of the whole user.
      const put = await s.scim('PUT', `/Users/${id}`, { ...oktaUser('ada.lovelace@example.com', 'Ada', 'King'), id, title: 'Analyst' });
      assert.equal(put.status, 200, put.text);
      assert.equal(put.json.name.familyName, 'King');
      const afterPut = await s.api(`/people/${id}`);
      assert.equal(afterPut.json.family_name, 'King');
      assert.equal(afterPut.json.job_title, 'Analyst');
      assert.ok(afterPut.json.updated_at > person.json.updated_at, 'updated_at moves');
      const searched = await s.api('/people?search=lovelace');
      assert.deepEqual(
        searched.json.data.map((p: { id: string }) => p.id),
        [id],
        'the search index follows the write',
      );

      const deactivated = await s.scim('PATCH', `/Users/${id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'replace', value: { active: false } }],
      });
      assert.equal(deactivated.status, 200, deactivated.text);
      assert.equal(deactivated.json.active, false);
      assert.equal((await s.api(`/people/${id}`)).json.status, 'INACTIVE');
      const inactiveList = await s.scim(
        'GET',
        `/Users?filter=${encodeURIComponent(`active eq false and userName eq "ada.lovelace@example.com"`)}`,
      );
      assert.equal(inactiveList.json.totalResults, 1);

      const reactivated = await s.scim('PATCH', `/Users/${id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'replace', value: { active: true } }],
      });
      assert.equal(reactivated.json.active, true);
      assert.equal((await s.api(`/people/${id}`)).json.status, 'ACTIVE');

      const deleted = await s.scim('DELETE', `/Users/${id}`);
      assert.equal(deleted.status, 204);
      assert.equal((await s.api(`/people/${id}`)).status, 404, 'an unreferenced person leaves the register');
      const gone = await s.scim('GET', `/Users/${id}`);
      assert.equal(gone.status, 404);
      assert.deepEqual(gone.json.schemas, [ERROR]);
      assert.equal(gone.json.status, '404');
    });

    it('a second user with the same userName in another letter case is refused as uniqueness (409)', async () => {
      const first = await s.scim('POST', '/Users', oktaUser('grace@example.com', 'Grace', 'Hopper'));
      assert.equal(first.status, 201);
      const again = await s.scim('POST', '/Users', oktaUser('GRACE@example.com', 'Grace', 'Hopper'));
      assert.equal(again.status, 409);
      assert.equal(again.json.scimType, 'uniqueness');
      assert.deepEqual(again.json.schemas, [ERROR]);
    });

    it('a PUT keeps what its body leaves out (a manager or phone the system of record wrote) and clears what it sends as null', async () => {
      const boss = await s.scim('POST', '/Users', oktaUser('boss.okta@example.com', 'Bo', 'Ss'));
      const created = await s.scim('POST', '/Users', {
        ...oktaUser('kept@example.com', 'Kay', 'Kept'),
        title: 'Engineer',
        phoneNumbers: [{ value: '+44 20 7946 0000', type: 'work' }],
        'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { manager: { value: boss.json.id }, employeeNumber: 'E-7' },
      });
      assert.equal(created.status, 201, created.text);
      const id = created.json.id as string;
      const put = await s.scim('PUT', `/Users/${id}`, {
        schemas: [USER],
        userName: 'kept@example.com',
        name: { givenName: 'Kay', familyName: 'Keeper' },
      });
      assert.equal(put.status, 200, put.text);
      const person = (await s.api(`/people/${id}`)).json;
      assert.deepEqual(
        [person.family_name, person.manager_id, person.work_phone, person.job_title],
        ['Keeper', boss.json.id, '+44 20 7946 0000', 'Engineer'],
      );
      assert.equal(put.json.externalId, '00u1esetp7HDb1Qpj0h8');
      const cleared = await s.scim('PUT', `/Users/${id}`, {
        schemas: [USER],
        userName: 'kept@example.com',
        phoneNumbers: null,
        title: null,
      });
      assert.equal(cleared.status, 200, cleared.text);
      const after = (await s.api(`/people/${id}`)).json;
      assert.deepEqual([after.work_phone, after.job_title, after.manager_id], [null, '', boss.json.id]);
    });

    it('pages a list with startIndex and count, and says how many there are', async () => {
      const all = await s.scim('GET', '/Users?count=0');
      assert.equal(all.json.Resources.length, 0);
      const total = all.json.totalResults as number;
      assert.ok(total >= 3);
      const page1 = await s.scim('GET', '/Users?startIndex=1&count=2');
      const page2 = await s.scim('GET', '/Users?startIndex=3&count=2');
      assert.deepEqual([page1.json.itemsPerPage, page1.json.startIndex, page2.json.startIndex], [2, 1, 3]);
      const ids = [...page1.json.Resources, ...page2.json.Resources].map((u: { id: string }) => u.id);
      assert.equal(new Set(ids).size, ids.length, 'no user on two pages');
      assert.equal(page1.json.totalResults, total);
    });

    it('Groups are refused with a SCIM error saying why (Okta group push off)', async () => {
      const groups = await s.scim('GET', '/Groups?startIndex=1&count=100');
      assert.equal(groups.status, 501);
      assert.deepEqual(groups.json.schemas, [ERROR]);
      assert.match(groups.json.detail, /one team/);
    });
  });
}
