/**
 * A real wsops server for the client's tests: the app built in-process over a fresh database
 * of the dialect (the server's own test harness), listening on 127.0.0.1 on a free port.
 */
import type { AddressInfo } from 'node:net';
import type { Dialect } from '../../../../src/store/database.js';
import { createHarness, type Harness } from '../../../../test/helpers/harness.js';

export { DIALECTS } from '../../../../test/helpers/databases.js';

export interface TestServer extends Harness {
  baseUrl: string;
}

export async function startServer(dialect: Dialect, env: Record<string, string> = {}): Promise<TestServer> {
  const harness = await createHarness(dialect, env);
  await harness.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = harness.app.server.address() as AddressInfo;
  return Object.assign(harness, { baseUrl: `http://127.0.0.1:${port}` });
}
