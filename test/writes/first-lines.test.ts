/**
 * The import's memory of where each id was first written (src/writes/first-lines.ts): it answers
 * exactly what a Map of the same ids would, through every growth of its table and buffer.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FirstLines } from '../../src/writes/first-lines.js';

describe('the first line of each id an import wrote', () => {
  it('answers as a Map does for 300,000 ids of mixed lengths, and knows nothing of ids never written', () => {
    const table = new FirstLines();
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
      if (table.get(id) === undefined) table.set(id, line);
      if (!expected.has(id)) expected.set(id, line);
    }
    assert.equal(table.size, expected.size);
    for (const [id, line] of expected) assert.equal(table.get(id), line, id);
    // Prefixes and extensions of stored ids are other ids.
    for (const id of [...expected.keys()].slice(0, 10_000)) {
      if (!expected.has(id.slice(0, -1))) assert.equal(table.get(id.slice(0, -1)), undefined);
      if (!expected.has(`${id}x`)) assert.equal(table.get(`${id}x`), undefined);
    }
  });

  it('keeps ids that differ in one character apart, at the smallest table size', () => {
    const table = new FirstLines();
    const ids = Array.from({ length: 3_000 }, (_, i) => `per_${String(i).padStart(4, '0')}`);
    for (const [i, id] of ids.entries()) table.set(id, i + 1);
    for (const [i, id] of ids.entries()) assert.equal(table.get(id), i + 1);
    assert.equal(table.get('per_3000'), undefined);
    assert.equal(table.get('per_'), undefined);
  });
});
