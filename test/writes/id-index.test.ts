/**
 * The import's numbered set of ids (src/writes/id-index.ts, behind the report's first line of each
 * id and a dry run's changed records): it answers exactly what a Map of the same ids to their
 * order of arrival would, through every growth of its table and buffer.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IdIndex } from '../../src/writes/id-index.js';

describe('the numbered ids an import remembers', () => {
  it('numbers 300,000 ids of mixed lengths in order of arrival, as a Map would, and knows nothing of ids never added', () => {
    const table = new IdIndex();
    const expected = new Map<string, number>();
    let seed = 7;
    const random = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed;
    };
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
    const idOf = () => {
      let id = 'per_';
      const length = 1 + (random() % 64);
      for (let i = 0; i < length; i++) id += alphabet[random() % alphabet.length];
      return id;
    };
    for (let line = 1; line <= 300_000; line++) {
      const id = idOf();
      if (table.find(id) < 0) assert.equal(table.add(id), expected.size);
      if (!expected.has(id)) expected.set(id, expected.size);
    }
    assert.equal(table.size, expected.size);
    for (const [id, entry] of expected) {
      assert.equal(table.find(id), entry, id);
      assert.equal(table.idAt(entry), id);
    }
    // Prefixes and extensions of stored ids are other ids.
    for (const id of [...expected.keys()].slice(0, 10_000)) {
      if (!expected.has(id.slice(0, -1))) assert.equal(table.find(id.slice(0, -1)), -1);
      if (!expected.has(`${id}x`)) assert.equal(table.find(`${id}x`), -1);
    }
  });

  it('keeps ids that differ in one character apart, at the smallest table size', () => {
    const table = new IdIndex();
    const ids = Array.from({ length: 3_000 }, (_, i) => `per_${String(i).padStart(4, '0')}`);
    for (const id of ids) table.add(id);
    for (const [i, id] of ids.entries()) assert.equal(table.find(id), i);
    assert.equal(table.find('per_3000'), -1);
    assert.equal(table.find('per_'), -1);
  });

  it('forgets every id when cleared, and numbers from 0 again', () => {
    const table = new IdIndex();
    for (let i = 0; i < 5_000; i++) table.add(`loc_${i}`);
    table.clear();
    assert.equal(table.size, 0);
    assert.equal(table.find('loc_1'), -1);
    assert.equal(table.add('loc_4999'), 0);
    assert.equal(table.find('loc_4999'), 0);
    assert.equal(table.find('loc_0'), -1);
  });
});
