/** The failure throttle's in-memory store stays bounded without forgetting a spent budget. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryFailureThrottle } from '../../src/guards/failure-throttle.js';

describe('in-memory failure throttle', () => {
  it('a flood of 100,000 other keys does not reset a spent budget: full buckets are dropped first', async () => {
    const throttle = new MemoryFailureThrottle();
    const now = Date.parse('2026-11-22T08:00:00Z');
    const spent = [{ key: 'api:10.0.0.1', limit: 3, windowMs: 60_000 }];
    for (let i = 0; i < 3; i++) assert.equal((await throttle.settle(spent, true, now)).allowed, true);
    assert.equal((await throttle.settle(spent, true, now)).allowed, false);
    // Each valid request from a new address leaves a full bucket behind.
    for (let i = 0; i < 100_001; i++) await throttle.settle([{ key: `api:flood-${i}`, limit: 3, windowMs: 60_000 }], false, now);
    const after = await throttle.settle(spent, false, now);
    assert.equal(after.allowed, false, 'still spent');
    assert.equal(after.retryAfter, 20);
  });
});
