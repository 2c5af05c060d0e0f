/**
 * Per-endpoint HTTP agents: reused while in use, closed once idle for the idle period (real
 * HTTP to a real receiver; the pool's clock is injected, so nothing sleeps for a minute).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AGENT_IDLE_MS, AgentPool, sendAttempt } from '../../src/webhooks/destinations/send.js';
import { Receiver } from '../helpers/receiver.js';

describe('endpoint agents', () => {
  let rx: Receiver;
  before(async () => {
    rx = await new Receiver({ checkWebhooks: false }).start();
  });
  after(async () => {
    await rx.stop();
  });

  it('an endpoint agent unused for 60 s is closed; one in use, or used more recently, is kept', async () => {
    assert.equal(AGENT_IDLE_MS, 60_000);
    let now = 0;
    const pool = new AgentPool({ now: () => now });
    try {
      const send = (endpointId: string) =>
        pool.with(endpointId, ['127.0.0.1'], (agent) => sendAttempt(agent, rx.url(`/${endpointId}`), {}, '{}'));
      assert.equal((await send('we_a')).ok, true);
      const reused = await pool.with('we_a', ['127.0.0.1'], async (agent) => agent);
      assert.equal(pool.size, 1, 'one agent per endpoint, reused');
      now += 30_000;
      assert.equal((await send('we_b')).ok, true);
      now += 30_000;
      // we_a idle for 60 s is closed, we_b (30 s) kept; an agent in use is never closed under a request.
      let inUseEvicted = -1;
      await pool.with('we_b', ['127.0.0.1'], async () => {
        now += 60_000;
        inUseEvicted = await pool.evictIdle();
      });
      assert.equal(inUseEvicted, 1, 'only the idle agent went');
      assert.equal(reused.closed || reused.destroyed, true, 'the idle agent is closed');
      assert.equal(pool.size, 1);
      assert.equal(await pool.evictIdle(), 0, 'the agent just used is kept');
      now += 60_000;
      assert.equal(await pool.evictIdle(), 1);
      assert.equal(pool.size, 0);
      assert.equal((await send('we_a')).ok, true, 'a later attempt opens a new agent');
    } finally {
      await pool.close();
    }
  });
});
