/**
 * Hostile SCIM input gets a SCIM error (4xx, the Error schema, a detail saying what is wrong),
 * never a 5xx and never a partial write: deep and long filters, unknown filter attributes,
 * huge and non-numeric paging, unknown attributes, malformed patch paths and bodies, NUL and
 * control characters in every kind of field, wrong JSON types.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DIALECTS } from '../helpers/databases.js';
import { type Answer, ENTERPRISE, ERROR, PATCH_OP, type ScimServer, startScimServer, USER } from './helpers.js';

const f = (filter: string) => `/Users?filter=${encodeURIComponent(filter)}`;

function refused(res: Answer, status: number, scimType?: string): void {
  assert.equal(res.status, status, res.text);
  assert.deepEqual(res.json.schemas, [ERROR]);
  assert.equal(res.json.status, String(status));
  assert.equal(typeof res.json.detail, 'string');
  if (scimType) assert.equal(res.json.scimType, scimType, res.json.detail);
}

for (const dialect of DIALECTS) {
  describe(`hostile SCIM input [${dialect}]`, () => {
    let s: ScimServer;
    let id: string;
    const good = { schemas: [USER], userName: 'target@example.com', name: { givenName: 'T', familyName: 'Arget' } };
    before(async () => {
      s = await startScimServer(dialect);
      id = (await s.scim('POST', '/Users', good)).json.id;
    });
    after(async () => s.close());

    it('filters: deep, long, unparsable, unknown attributes and operators are invalidFilter', async () => {
      const deep = `${'('.repeat(400)}userName eq "a"${')'.repeat(400)}`;
      refused(await s.scim('GET', f(deep)), 400, 'invalidFilter');
      refused(await s.scim('GET', f(`${'not ('.repeat(12)}userName eq "a"${')'.repeat(12)}`)), 400, 'invalidFilter');
      refused(await s.scim('GET', f(Array(300).fill('userName eq "a"').join(' or '))), 400, 'invalidFilter');
      refused(await s.scim('GET', f('userName eq')), 400, 'invalidFilter');
      refused(await s.scim('GET', f('userName eq "a" and')), 400, 'invalidFilter');
      refused(await s.scim('GET', f('password eq "x"')), 400, 'invalidFilter');
      refused(await s.scim('GET', f('userName gt "a"')), 400, 'invalidFilter');
      refused(await s.scim('GET', f('userName eq "a\u0000b"')), 400, 'invalidFilter');
      refused(await s.scim('GET', f('userName eq "\u001b[2J"')), 400, 'invalidFilter');
      refused(await s.scim('GET', f('emails[display eq "x"]')), 400, 'invalidFilter');
      refused(await s.scim('GET', f('"quoted" eq "x"')), 400, 'invalidFilter');
    });

    it('paging: a huge count is lowered to the maximum; non-numbers and unknown parameters are refused', async () => {
      const huge = await s.scim('GET', '/Users?count=99999999999');
      assert.equal(huge.status, 200);
      assert.ok(huge.json.itemsPerPage <= 200);
      assert.equal((await s.scim('GET', '/Users?count=-5')).json.itemsPerPage, 0);
      assert.equal((await s.scim('GET', '/Users?startIndex=-3&count=1')).json.startIndex, 1);
      refused(await s.scim('GET', '/Users?count=1e9'), 400, 'invalidValue');
      refused(await s.scim('GET', '/Users?startIndex=abc'), 400, 'invalidValue');
      refused(await s.scim('GET', '/Users?count=1&count=2'), 400, 'invalidValue');
      refused(await s.scim('GET', '/Users?cnt=5'), 400, 'invalidValue');
    });

    it('bodies: unknown attributes, wrong types, missing userName, two different work emails, bad JSON, control characters are refused and nothing is written', async () => {
      const before = (await s.scim('GET', '/Users?count=0')).json.totalResults;
      refused(await s.scim('POST', '/Users', { ...good, userName: 'x1@example.com', usrName: 'typo' }), 400, 'invalidSyntax');
      refused(await s.scim('POST', '/Users', { ...good, userName: 'x2@example.com', 'urn:example:custom': {} }), 400, 'invalidSyntax');
      refused(await s.scim('POST', '/Users', { ...good, userName: 'x3@example.com', [ENTERPRISE]: { badge: '1' } }), 400, 'invalidSyntax');
      refused(await s.scim('POST', '/Users', { ...good, userName: 'x4@example.com', name: 'Ada' }), 400, 'invalidValue');
      refused(await s.scim('POST', '/Users', { ...good, userName: 'x5@example.com', active: 'maybe' }), 400, 'invalidValue');
      refused(await s.scim('POST', '/Users', { ...good, userName: 'x6@example.com', emails: 'x6@example.com' }), 400, 'invalidValue');
      refused(
        await s.scim('POST', '/Users', {
          ...good,
          userName: 'x7@example.com',
          emails: [
            { type: 'work', value: 'one@example.com' },
            { type: 'work', value: 'other@example.com' },
          ],
        }),
        400,
        'invalidValue',
      );
      refused(await s.scim('POST', '/Users', { schemas: [USER] }), 400, 'invalidValue');
      refused(await s.scim('POST', '/Users', { ...good, userName: 'not an email' }), 400, 'invalidValue');
      refused(await s.scim('POST', '/Users', { ...good, userName: 'x8@example.com', schemas: ['urn:x'] }), 400, 'invalidSyntax');
      refused(
        await s.scim('POST', '/Users', { ...good, userName: 'x9@example.com', [ENTERPRISE]: { manager: { value: 'per_nobody' } } }),
        400,
        'invalidValue',
      );
      refused(await s.scim('POST', '/Users', { ...good, userName: 'x10@example.com', externalId: 'a'.repeat(300) }), 400, 'invalidValue');
      refused(await s.scim('POST', '/Users', [good]), 400, 'invalidSyntax');
      refused(await s.scim('POST', '/Users', '{"schemas": ['), 400, 'invalidSyntax');
      refused(await s.scim('POST', '/Users', '{"__proto__": {"admin": true}}'), 400);
      refused(await s.scim('POST', '/Users', `${'['.repeat(30_000)}${']'.repeat(30_000)}`), 400, 'invalidSyntax');
      const deepArray = `${'['.repeat(5000)}${']'.repeat(5000)}`;
      const deepName = `{"schemas":["${USER}"],"userName":"x15@example.com","name":{"givenName":${deepArray}}}`;
      refused(await s.scim('POST', '/Users', deepName), 400, 'invalidValue');
      refused(await s.scim('POST', '/Users', JSON.stringify({ ...good, userName: 'x11@example.com', tags: 'y'.repeat(70_000) })), 413);
      for (const [field, value] of [
        ['displayName', 'Ada\u0000Lovelace'],
        ['title', 'Boss\u001b]52;c;evil\u0007'],
        ['externalId', 'ext\u0000id'],
        ['userName', 'x12\u0000@example.com'],
        ['displayName', 'line\nbreak'],
      ] as const) {
        refused(await s.scim('POST', '/Users', { ...good, userName: 'x13@example.com', [field]: value }), 400, 'invalidValue');
      }
      refused(
        await s.scim('POST', '/Users', { ...good, userName: 'x14@example.com', name: { givenName: 'A\u0085B' } }),
        400,
        'invalidValue',
      );
      assert.equal((await s.scim('GET', '/Users?count=0')).json.totalResults, before, 'nothing was written');
    });

    it('patches: malformed paths, unknown ops, bad shapes and immutable id are refused and the user is unchanged', async () => {
      const before = (await s.scim('GET', `/Users/${id}`)).json;
      const p = (...Operations: unknown[]) => ({ schemas: [PATCH_OP], Operations });
      refused(await s.scim('PATCH', `/Users/${id}`, p({ op: 'replace', path: 'emails[type eq "work".value', value: 'a@b.c' })), 400);
      refused(await s.scim('PATCH', `/Users/${id}`, p({ op: 'replace', path: 'nosuch', value: 'x' })), 400, 'invalidPath');
      refused(await s.scim('PATCH', `/Users/${id}`, p({ op: 'replace', path: 'name.nosuch', value: 'x' })), 400, 'invalidPath');
      refused(await s.scim('PATCH', `/Users/${id}`, p({ op: 'replace', path: 'title\u0000', value: 'x' })), 400, 'invalidPath');
      refused(await s.scim('PATCH', `/Users/${id}`, p({ op: 'replace', path: 'a'.repeat(400), value: 'x' })), 400, 'invalidPath');
      refused(await s.scim('PATCH', `/Users/${id}`, p({ op: 'move', path: 'title', value: 'x' })), 400, 'invalidSyntax');
      refused(await s.scim('PATCH', `/Users/${id}`, p({ op: 'remove' })), 400, 'noTarget');
      refused(await s.scim('PATCH', `/Users/${id}`, p({ op: 'replace', path: 'id', value: 'per_other' })), 400, 'mutability');
      refused(await s.scim('PATCH', `/Users/${id}`, p({ op: 'replace', path: 'title', value: { nested: true } })), 400, 'invalidValue');
      refused(await s.scim('PATCH', `/Users/${id}`, p({ op: 'replace', path: 'title', value: 'x\u0000' })), 400, 'invalidValue');
      refused(
        await s.scim('PATCH', `/Users/${id}`, p(...Array(101).fill({ op: 'replace', path: 'title', value: 'x' }))),
        400,
        'invalidSyntax',
      );
      refused(await s.scim('PATCH', `/Users/${id}`, { Operations: [] }), 400, 'invalidSyntax');
      refused(await s.scim('PATCH', `/Users/${id}`, p()), 400, 'invalidSyntax');
      refused(await s.scim('PATCH', `/Users/${id}`, p('replace')), 400, 'invalidSyntax');
      // Sent as text: the test's own JSON.stringify would overflow on it.
      const deepValue = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
      const deepPatch = (value: string) => `{"schemas":["${PATCH_OP}"],"Operations":[{"op":"replace","value":${value}}]}`;
      const deep = await s.scim('PATCH', `/Users/${id}`, deepPatch(`{"title":${deepValue}}`));
      assert.ok(deep.status >= 400 && deep.status < 500, deep.text);
      const deeper = await s.scim('PATCH', `/Users/${id}`, deepPatch(`{"deep":${deepValue}}`));
      assert.ok(deeper.status >= 400 && deeper.status < 500, deeper.text);
      const after = (await s.scim('GET', `/Users/${id}`)).json;
      assert.deepEqual(after, before);
    });

    it('ids and paths: malformed ids are 404, unknown endpoints are SCIM errors', async () => {
      refused(await s.scim('GET', '/Users/per_%00'), 404);
      refused(await s.scim('GET', `/Users/${'x'.repeat(150)}`), 404);
      refused(await s.scim('GET', "/Users/per_1'%20OR%201=1"), 404);
      refused(await s.scim('DELETE', '/Users/ast_1'), 404);
      refused(await s.scim('GET', '/Nothing'), 404);
      refused(await s.scim('POST', '/Bulk', { schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'], Operations: [] }), 501);
      refused(await s.scim('GET', '/Schemas/urn:nothing'), 404);
    });
  });
}
