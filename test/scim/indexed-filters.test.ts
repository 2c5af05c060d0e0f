/**
 * SCIM filters answered by indexes (migrations 0044 and 0045: the short rows' indexes, and
 * PostgreSQL's trigram index for `co`) select exactly what the filter says: the same people as
 * the filter's meaning computed here over every User, with each attribute's case rule, LIKE's
 * and GLOB's own characters (`%`, `_`, `\`, `*`, `?`, `[`) compared as text, missing values,
 * `pr`, `not` and `ne`, and the negation of an equality (counted as everyone less its matches).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { compileFilter, scans } from '../../src/scim/filter.js';
import { DIALECTS } from '../helpers/databases.js';
import { ENTERPRISE, type ScimServer, startScimServer, USER } from './helpers.js';

interface ScimUser {
  id: string;
  userName: string;
  displayName?: string;
  externalId?: string;
  active: boolean;
  name?: { givenName?: string; familyName?: string };
  [ENTERPRISE]?: { employeeNumber?: string; manager?: { value?: string } };
}

const PEOPLE: [string, string, string | undefined][] = [
  // userName, displayName, externalId
  ['pct@example.com', 'Fifty 50% Off', 'Ext%1'],
  ['pcx@example.com', 'Fifty 50x Off', 'Ext_1'],
  ['under_score@example.com', 'A_B Under', 'ExtA1'],
  ['underxscore@example.com', 'AxB Under', 'ext\\1'],
  ['slash@example.com', 'Back\\Slash', 'EXT*1'],
  ['star@example.com', 'Star*Glob?[x]', undefined],
  ['quote@example.com', 'Say "Hi"', ''],
  ['proto@example.com', '__proto__', '__proto__'],
  ['MiXeD.Case@Example.COM', 'ÉLODIE Mixed', 'MiXeD'],
  ['plain@example.com', 'Plain Person', 'p-1'],
];

for (const dialect of DIALECTS) {
  describe(`SCIM filters served by indexes select what they say [${dialect}]`, () => {
    let s: ScimServer;
    let users: ScimUser[];
    before(async () => {
      s = await startScimServer(dialect);
      const ids: string[] = [];
      for (const [i, [userName, displayName, externalId]] of PEOPLE.entries()) {
        const created = await s.scim('POST', '/Users', {
          schemas: [USER],
          userName,
          displayName,
          name: { givenName: displayName.split(' ')[0], familyName: `Fam${i}` },
          emails: [{ primary: true, value: userName, type: 'work' }],
          ...(externalId === undefined ? {} : { externalId }),
          active: i % 3 !== 0,
          ...(i > 0 ? { [ENTERPRISE]: { manager: { value: ids[0] }, employeeNumber: `E-${i}` } } : {}),
        });
        assert.equal(created.status, 201, created.text);
        ids.push(created.json.id);
      }
      const all = await s.scim('GET', '/Users?count=200');
      assert.equal(all.status, 200, all.text);
      users = all.json.Resources;
      assert.ok(users.length > PEOPLE.length, 'the seeded people are there too (SCIM sees every person)');
    });
    after(async () => s?.close());

    const lower = (v: string | undefined) => v?.toLowerCase();
    const cases: [string, (u: ScimUser) => boolean][] = [
      ['displayName co "50%"', (u) => !!lower(u.displayName)?.includes('50%')],
      ['displayName co "a_b"', (u) => !!lower(u.displayName)?.includes('a_b')],
      // scim2-parse-filter keeps a backslash that escapes no quote as it is.
      ['displayName co "k\\s"', (u) => !!lower(u.displayName)?.includes('k\\s')],
      ['displayName co "\\"hi\\""', (u) => !!lower(u.displayName)?.includes('"hi"')],
      ['displayName co "*glob?[x"', (u) => !!lower(u.displayName)?.includes('*glob?[x')],
      ['displayName co "PROTO"', (u) => !!lower(u.displayName)?.includes('proto')],
      ['displayName sw "fifty 50%"', (u) => !!lower(u.displayName)?.startsWith('fifty 50%')],
      ['displayName sw "a_"', (u) => !!lower(u.displayName)?.startsWith('a_')],
      ['displayName sw "star*"', (u) => !!lower(u.displayName)?.startsWith('star*')],
      ['displayName eq "PLAIN person"', (u) => lower(u.displayName) === 'plain person'],
      ['userName co "_score"', (u) => u.userName.toLowerCase().includes('_score')],
      ['userName sw "MIXED."', (u) => u.userName.toLowerCase().startsWith('mixed.')],
      ['userName eq "mixed.case@example.com"', (u) => u.userName.toLowerCase() === 'mixed.case@example.com'],
      ['emails.value sw "PCT@"', (u) => u.userName.toLowerCase().startsWith('pct@')],
      ['externalId eq "Ext%1"', (u) => u.externalId === 'Ext%1'],
      ['externalId eq "ext%1"', (u) => u.externalId === 'ext%1'],
      ['externalId sw "Ext_"', (u) => !!u.externalId?.startsWith('Ext_')],
      ['externalId sw "ext\\1"', (u) => !!u.externalId?.startsWith('ext\\1')],
      ['externalId sw "EXT*"', (u) => !!u.externalId?.startsWith('EXT*')],
      ['externalId co "xt%"', (u) => !!u.externalId?.includes('xt%')],
      ['externalId eq "__proto__"', (u) => u.externalId === '__proto__'],
      ['externalId pr', (u) => !!u.externalId],
      ['not (externalId pr)', (u) => !u.externalId],
      ['externalId eq null', (u) => !u.externalId],
      ['externalId ne "p-1"', (u) => u.externalId !== 'p-1'],
      ['not (userName eq "PLAIN@example.com")', (u) => u.userName.toLowerCase() !== 'plain@example.com'],
      ['not (not (userName eq "plain@example.com"))', (u) => u.userName.toLowerCase() === 'plain@example.com'],
      ['active eq false', (u) => !u.active],
      ['active eq true', (u) => u.active],
      ['active ne true', (u) => !u.active],
      ['not (active eq false)', (u) => u.active],
      ['name.givenName eq "fifty"', (u) => lower(u.name?.givenName) === 'fifty'],
      ['name.familyName sw "fam1"', (u) => !!lower(u.name?.familyName)?.startsWith('fam1')],
      ['displayName pr and not (displayName sw "Fifty")', (u) => !!u.displayName && !lower(u.displayName)?.startsWith('fifty')],
      [`${ENTERPRISE}:employeeNumber pr`, (u) => !!u[ENTERPRISE]?.employeeNumber],
      [`${ENTERPRISE}:employeeNumber sw "E-1"`, (u) => !!u[ENTERPRISE]?.employeeNumber?.startsWith('E-1')],
    ];

    for (const [filter, wanted] of cases) {
      it(`${filter}`, async () => {
        const expected = users
          .filter(wanted)
          .map((u) => u.id)
          .sort();
        const page = await s.scim('GET', `/Users?count=200&filter=${encodeURIComponent(filter)}`);
        assert.equal(page.status, 200, page.text);
        assert.equal(page.json.totalResults, expected.length);
        assert.deepEqual(page.json.Resources.map((u: ScimUser) => u.id).sort(), expected);
      });
    }

    it('manager.value eq: the people who name the manager', async () => {
      const manager = users.find((u) => u.userName === 'pct@example.com')?.id as string;
      const expected = users
        .filter((u) => u[ENTERPRISE]?.manager?.value === manager)
        .map((u) => u.id)
        .sort();
      assert.ok(expected.length >= PEOPLE.length - 1);
      const page = await s.scim('GET', `/Users?count=200&filter=${encodeURIComponent(`${ENTERPRISE}:manager.value eq "${manager}"`)}`);
      assert.equal(page.json.totalResults, expected.length);
      assert.deepEqual(page.json.Resources.map((u: ScimUser) => u.id).sort(), expected);
    });

    it('pages of the negation of an equality come in id order, counted exactly', async () => {
      const filter = encodeURIComponent('not (userName eq "plain@example.com")');
      const expected = users
        .filter((u) => u.userName !== 'plain@example.com')
        .map((u) => u.id)
        .sort();
      const seen: string[] = [];
      for (let start = 1; start <= expected.length; start += 3) {
        const page = await s.scim('GET', `/Users?filter=${filter}&startIndex=${start}&count=3`);
        assert.equal(page.json.totalResults, expected.length);
        seen.push(...page.json.Resources.map((u: ScimUser) => u.id));
      }
      assert.deepEqual(seen, expected);
    });
  });
}

describe('which SCIM filters are paced', () => {
  it('an equality, a prefix or active eq false is not; a read whose count is of the whole directory (co, ew, pr, a negation) is', () => {
    for (const f of [
      'userName eq "a"',
      'displayName sw "a"',
      'active eq false',
      'not (externalId pr)',
      'userName eq "a" and displayName co "b"',
    ])
      assert.equal(scans(compileFilter(f)), false, f);
    for (const f of [
      'displayName co "abc"',
      'userName ew "a"',
      'externalId pr',
      'active eq true',
      'not (userName eq "a")',
      'displayName eq "a" or displayName co "b"',
    ])
      assert.equal(scans(compileFilter(f)), true, f);
  });
});
