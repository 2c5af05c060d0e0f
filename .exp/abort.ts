import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWriter, person, site, TEST_TOKEN } from '../test/writes/helpers.js';
const w = await createWriter('sqlite');
await w.internal.listen({ port: 0, host: '127.0.0.1' });
const ws = await w.h.workspace({ seed: false });
const port = (w.internal.server.address() as AddressInfo).port;
const line = (register: string, record: Record<string, unknown>) => JSON.stringify({ register, op: 'upsert', record });
const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: `/internal/v1/workspaces/${ws}/import`, headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/x-ndjson', 'transfer-encoding': 'chunked' } });
req.on('error', (e) => console.log('client error', e.message));
req.write(`${line('locations', site('loc_hq'))}\n`);
let chunk = '';
for (let i = 0; i < 1500; i++) chunk += `${line('people', person(`per_${i}`, 'loc_hq'))}\n`;
req.write(chunk);
req.write('{"register":"people","op":"ups');
setTimeout(() => req.destroy(), 300);
for (let i = 0; i < 40; i++) {
  await new Promise((r) => setTimeout(r, 100));
  const row = await w.h.services.database.db.selectFrom('record_imports').selectAll().where('workspace_id', '=', ws).executeTakeFirst();
  if (i % 10 === 0 || row?.finished_at) console.log(i, row?.finished_at, row?.report?.slice(0, 200));
  if (row?.finished_at) break;
}
await w.internal.close(); await w.h.close();
