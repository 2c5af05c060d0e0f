/**
 * The request shapes Microsoft Entra ID's provisioning service sends (its SCIM documentation's
 * examples): a test connection by a filter on a userName that does not exist, a create with the
 * enterprise extension, lookups by externalId, PATCHes with capitalised ops and string booleans,
 * paths into emails and the enterprise manager, the soft delete (active "False") and the final
 * DELETE, which keeps a person other records name.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { people } from '../../src/registers/catalogue.js';
import { deleteOne, putRecord } from '../../src/writes/record-writes.js';
import { DIALECTS } from '../helpers/databases.js';
import { ENTERPRISE, PATCH_OP, type ScimServer, startScimServer, USER } from './helpers.js';

const entraUser = (upn: string, externalId: string, extra: Record<string, unknown> = {}) => ({
  schemas: [USER, ENTERPRISE],
  externalId,
  userName: upn,
  active: true,
  displayName: 'Barbara Jensen',
  emails: [{ primary: true, type: 'work', value: upn }],
  meta: { resourceType: 'User' },
  name: { formatted: 'Barbara Jensen', familyName: 'Jensen', givenName: 'Barbara' },
  title: 'Tour Guide',
  phoneNumbers: [{ type: 'work', value: '+1 555 0100' }],
  [ENTERPRISE]: { employeeNumber: '701984', department: 'Tour Operations' },
  ...extra,
});

const patch = (...Operations: unknown[]) => ({ schemas: [PATCH_OP], Operations });

for (const dialect of DIALECTS) {
  describe(`Entra ID's provisioning sequence [${dialect}]`, () => {
    let s: ScimServer;
    before(async () => {
      s = await startScimServer(dialect);
    });
    after(async () => s.close());

    it('test connection, create, lookups, PATCHes with Entra casing and string booleans, soft delete, DELETE', async () => {
      const probe = await s.scim('GET', `/Users?filter=${encodeURIComponent('userName eq "non-existent user"')}`);
      assert.equal(probe.status, 200);
      assert.equal(probe.json.totalResults, 0);

      const events = async () => (await s.h.services.database.db.selectFrom('events').select('id').execute()).length;
      const eventsBefore = await events();

      const created = await s.scim('POST', '/Users', entraUser('bjensen@example.com', 'aad-0001'));
      assert.equal(created.status, 201, created.text);
      const id = created.json.id as string;
      assert.equal(created.json[ENTERPRISE].employeeNumber, '701984');
      assert.deepEqual(created.json.phoneNumbers, [{ value: '+1 555 0100', type: 'work', primary: true }]);

      const byExternal = await s.scim('GET', `/Users?filter=${encodeURIComponent('externalId eq "aad-0001"')}`);
      assert.deepEqual(
        byExternal.json.Resources.map((u: { id: string }) => u.id),
        [id],
      );
      assert.equal(
        (await s.scim('GET', `/Users?filter=${encodeURIComponent('externalId eq "AAD-0001"')}`)).json.totalResults,
        0,
        'externalId is case-exact',
      );

      // A manager, provisioned first, then set with Entra's bare-string value.
      const boss = await s.scim('POST', '/Users', entraUser('boss@example.com', 'aad-0002', { displayName: 'The Boss' }));
      assert.equal(boss.status, 201, boss.text);
      const patched = await s.scim(
        'PATCH',
        `/Users/${id}`,
        patch(
          { op: 'Replace', path: 'name.givenName', value: 'Babs' },
          { op: 'Replace', path: 'emails[type eq "work"].value', value: 'babs.jensen@example.com' },
          { op: 'Add', path: `${ENTERPRISE}:manager`, value: boss.json.id },
          { op: 'Replace', path: 'title', value: 'Senior Tour Guide' },
        ),
      );
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.json.userName, 'bjensen@example.com', "userName is the identity provider's name, apart from the email");
      assert.deepEqual(patched.json.emails, [{ value: 'babs.jensen@example.com', type: 'work', primary: true }]);
      const person = (await s.api(`/people/${id}`)).json;
      assert.deepEqual(
        [person.given_name, person.work_email, person.manager_id, person.job_title],
        ['Babs', 'babs.jensen@example.com', boss.json.id, 'Senior Tour Guide'],
      );

      const removed = await s.scim('PATCH', `/Users/${id}`, patch({ op: 'Remove', path: `${ENTERPRISE}:manager` }));
      assert.equal(removed.status, 200, removed.text);
      assert.equal((await s.api(`/people/${id}`)).json.manager_id, null);

      // Entra's soft delete: a string boolean under a capitalised op.
      const soft = await s.scim('PATCH', `/Users/${id}`, patch({ op: 'Replace', path: 'active', value: 'False' }));
      assert.equal(soft.status, 200, soft.text);
      assert.equal(soft.json.active, false);
      assert.equal((await s.api(`/people/${id}`)).json.status, 'INACTIVE');
      const valueOnly = await s.scim('PATCH', `/Users/${id}`, patch({ op: 'Replace', value: { active: 'True' } }));
      assert.equal(valueOnly.json.active, true);
      // A value-only operation whose keys are attribute paths, as Entra sends several changes at once.
      const paths = await s.scim(
        'PATCH',
        `/Users/${id}`,
        patch({ op: 'Replace', value: { 'name.familyName': 'Jensen-Smith', [`${ENTERPRISE}:employeeNumber`]: '701985' } }),
      );
      assert.equal(paths.status, 200, paths.text);
      assert.equal(paths.json[ENTERPRISE].employeeNumber, '701985');
      assert.equal((await s.api(`/people/${id}`)).json.family_name, 'Jensen-Smith');

      assert.equal(await events(), eventsBefore, 'SCIM writes are direct writes: no webhook event');
      const audit = await s.h.services.database.db
        .selectFrom('audit_events')
        .select(['action', 'actor', 'target'])
        .where('workspace_id', '=', s.ws)
        .where('target', '=', id)
        .orderBy('seq')
        .execute();
      assert.deepEqual(
        audit.map((a) => a.action),
        ['record.scim_created', ...Array(5).fill('record.scim_patched')],
      );
      assert.ok(audit.every((a) => a.actor === `scim:${s.tokenId}`));

      const deleted = await s.scim('DELETE', `/Users/${id}`);
      assert.equal(deleted.status, 204);
      assert.equal((await s.api(`/people/${id}`)).status, 404);
    });

    it('DELETE of a person other records name keeps it INACTIVE in /api/v1 and hides it from SCIM', async () => {
      const boss = await s.scim('POST', '/Users', entraUser('manager@example.com', 'aad-0100'));
      const report = await s.scim(
        'POST',
        '/Users',
        entraUser('report@example.com', 'aad-0101', { [ENTERPRISE]: { manager: { value: boss.json.id } } }),
      );
      assert.equal(report.status, 201, report.text);
      const deleted = await s.scim('DELETE', `/Users/${boss.json.id}`);
      assert.equal(deleted.status, 204);
      const kept = await s.api(`/people/${boss.json.id}`);
      assert.equal(kept.status, 200, 'still there: the report names it as manager');
      assert.equal(kept.json.status, 'INACTIVE');
      assert.equal((await s.scim('GET', `/Users/${boss.json.id}`)).status, 404);
      assert.equal((await s.scim('GET', `/Users?filter=${encodeURIComponent('externalId eq "aad-0100"')}`)).json.totalResults, 0);
      assert.equal((await s.scim('GET', `/Users?filter=${encodeURIComponent('userName eq "MANAGER@example.com"')}`)).json.totalResults, 0);
      // Re-hired: the identity provider creates the user again, and the same person comes back.
      const back = await s.scim('POST', '/Users', entraUser('Manager@example.com', 'aad-0100'));
      assert.equal(back.status, 201, back.text);
      assert.equal(back.json.id, boss.json.id);
      assert.equal((await s.api(`/people/${boss.json.id}`)).json.status, 'ACTIVE');
    });

    it('a person the system of record deletes and writes again under the same id starts without its old externalId', async () => {
      const created = await s.scim('POST', '/Users', entraUser('leaver@example.com', 'aad-0200'));
      assert.equal(created.status, 201, created.text);
      const id = created.json.id as string;
      const person = (await s.api(`/people/${id}`)).json as Record<string, unknown>;
      await deleteOne(s.h.services, s.ws, people, id);
      const again: Record<string, unknown> = { ...person };
      delete again.created_at;
      delete again.updated_at;
      await putRecord(s.h.services, s.ws, people, id, again);
      const read = await s.scim('GET', `/Users/${id}`);
      assert.equal(read.status, 200, read.text);
      assert.equal(read.json.externalId, undefined, 'the old externalId went with the deleted person');
      const linked = await s.scim('GET', `/Users?filter=${encodeURIComponent('externalId eq "aad-0200"')}`);
      assert.equal(linked.json.totalResults, 0);
    });

    it('a seeded person (written by the system of record) is found by userName and linked by externalId', async () => {
      const people = await s.api('/people?limit=1');
      const seeded = people.json.data[0];
      const found = await s.scim('GET', `/Users?filter=${encodeURIComponent(`userName eq "${String(seeded.work_email).toUpperCase()}"`)}`);
      assert.equal(found.json.totalResults, 1);
      assert.equal(found.json.Resources[0].id, seeded.id);
      const linked = await s.scim('PATCH', `/Users/${seeded.id}`, patch({ op: 'Add', path: 'externalId', value: 'aad-seeded' }));
      assert.equal(linked.status, 200, linked.text);
      assert.equal(linked.json.externalId, 'aad-seeded');
      const after = (await s.api(`/people/${seeded.id}`)).json;
      assert.deepEqual([after.team_id, after.location_id, after.start_date], [seeded.team_id, seeded.location_id, seeded.start_date]);
    });

    it('discovery says what is supported', async () => {
      const config = await s.scim('GET', '/ServiceProviderConfig');
      assert.deepEqual(
        [
          config.json.patch.supported,
          config.json.bulk.supported,
          config.json.filter.supported,
          config.json.sort.supported,
          config.json.etag.supported,
        ],
        [true, false, true, false, false],
      );
      assert.equal(config.json.filter.maxResults, 200);
      const types = await s.scim('GET', '/ResourceTypes');
      assert.deepEqual(
        types.json.Resources.map((t: { id: string }) => t.id),
        ['User'],
      );
      const schemas = await s.scim('GET', '/Schemas');
      assert.deepEqual(
        schemas.json.Resources.map((t: { id: string }) => t.id),
        [USER, ENTERPRISE],
      );
      assert.equal((await s.scim('GET', `/Schemas/${USER}`)).json.name, 'User');
    });
  });
}
