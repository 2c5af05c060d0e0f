/**
 * One word rule for both databases: the same records and the same queries give the same ids
 * on SQLite and PostgreSQL, for accents, ligatures, CJK, emoji, punctuation, digits of other
 * scripts and characters one database's own parser would drop (`mac ৴`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assets } from '../../src/registers/catalogue.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const NAMES: Record<string, string> = {
  ast_macbook: 'MacBook Pro 14',
  ast_macmini: 'Mac mini',
  ast_ecran: 'Écran Dell 27″',
  ast_jose: 'José’s iPhone',
  ast_tokyo: '東京オフィス ノートPC',
  ast_rocket: 'Laptop 🚀 rocket',
  ast_counter: 'Zähler ৴ counter',
  ast_fiber: 'ﬁber cable',
  ast_istanbul: 'İstanbul desk',
  ast_long: `${'a'.repeat(150)} tape`,
  ast_cpp: 'C++/C# toolkit',
  ast_square: 'x² meter',
  ast_roman: 'Ⅻ clock',
  ast_arabic: '٣٤ drill',
  ast_obrien: 'O’Brien ladder',
  ast_nul: 'null\u0000byte lamp',
};

/** query -> the ids it must find (sorted), identical on both databases. */
const EXPECTED: [string, string[]][] = [
  ['mac ৴', []],
  ['mac', ['ast_macbook', 'ast_macmini']],
  ['৴', ['ast_counter']],
  ['ecran', ['ast_ecran']],
  ['ÉCRAN dell', ['ast_ecran']],
  ['jose', ['ast_jose']],
  ['东京', []],
  ['東京', ['ast_tokyo']],
  ['オフィス', []],
  ['ノートpc', ['ast_tokyo']],
  ['rocket 🚀', ['ast_rocket']],
  ['fiber', ['ast_fiber']],
  ['ﬁb', ['ast_fiber']],
  ['istanbul', ['ast_istanbul']],
  ['İSTANBUL', ['ast_istanbul']],
  ['a'.repeat(120), ['ast_long']],
  ['c toolkit', ['ast_cpp']],
  ['c#', ['ast_cpp', 'ast_counter', 'ast_fiber', 'ast_roman']],
  ['x2', ['ast_square']],
  ['xii', ['ast_roman']],
  ['٣٤', ['ast_arabic']],
  ['34', []],
  ['o’brien', ['ast_obrien']],
  ["o'brien", ['ast_obrien']],
  ['null byte', ['ast_nul']],
  ['zahler counter', ['ast_counter']],
  ['zähler-counter', ['ast_counter']],
];

const answers = new Map<string, Map<string, string[]>>();

for (const dialect of DIALECTS) {
  describe(`search word rule [${dialect}]`, () => {
    let h: Harness;
    let key: string;
    before(async () => {
      h = await createHarness(dialect);
      const ws = await h.workspace({ seed: false });
      ({ key } = await h.key(ws));
      const at = new Date(h.clock()).toISOString();
      for (const [id, name] of Object.entries(NAMES)) {
        await h.services.records.put(ws, assets, {
          id,
          created_at: at,
          updated_at: at,
          asset_tag: `T-${id.slice(4, 8)}`,
          name,
          category: 'OTHER',
          status: 'AVAILABLE',
          custody: [],
        });
      }
      answers.set(dialect, new Map());
    });
    after(() => h.close());

    for (const [query, expected] of EXPECTED) {
      it(`search=${JSON.stringify(query)} finds ${expected.length ? expected.join(', ') : 'nothing'}`, async () => {
        const res = await h.get(`/api/v1/assets?limit=1000&search=${encodeURIComponent(query)}`, key);
        assert.equal(res.status, 200, res.body);
        const ids = (res.json.data as { id: string }[]).map((r) => r.id).sort();
        answers.get(dialect)?.set(query, ids);
        assert.deepEqual(ids, [...expected].sort());
      });
    }

    it('a search with no letter or digit (only emoji or punctuation) is 400 on both', async () => {
      for (const query of ['🚀', '++/#', '″']) {
        const res = await h.get(`/api/v1/assets?search=${encodeURIComponent(query)}`, key);
        assert.equal(res.status, 400);
        assert.equal(res.json.param, 'search');
      }
    });
  });
}

if (DIALECTS.length > 1) {
  describe('search word rule across databases', () => {
    it('every query found the same ids on every database', () => {
      const [first, ...rest] = DIALECTS.map((d) => answers.get(d));
      for (const other of rest) assert.deepEqual(other, first);
    });
  });
}
