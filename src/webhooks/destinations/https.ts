/** Webhooks: one HTTP POST through the endpoint's agent (send.ts holds the request and the agent pool). */
import { AgentPool, sendAttempt } from './send.js';
import type { Message, Target, Transport } from './transport.js';

export class HttpsTransport implements Transport {
  private readonly agents: AgentPool;

  constructor(options: { idleMs?: number | undefined }) {
    this.agents = new AgentPool({ idleMs: options.idleMs });
  }

  send(target: Target, message: Message, deadline: AbortSignal) {
    const headers = { ...message.headers, 'user-agent': 'wsops-webhooks/1' };
    return this.agents.with(target.endpointId, target.addresses, (agent) =>
      sendAttempt(agent, target.url, headers, message.body, deadline),
    );
  }

  async forget(): Promise<void> {
    // Agents close when idle; an HTTP agent holds no session a disabled endpoint would keep.
  }

  close(): Promise<void> {
    return this.agents.close();
  }
}
