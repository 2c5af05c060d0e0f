/**
 * The program the internal generated-client check runs: every operation of
 * openapi-internal.json through the client @hey-api/openapi-ts generated from it, on a seeded
 * workspace. Per register it writes a copy of a seeded record and reads, patches and deletes
 * it; it exports the workspace and imports the export as a dry run; it runs each domain action
 * on a seeded record in the state the action needs, and sets an endpoint's signature headers. It prints every call's operation and status.
 */

/** One register's record operations, as the document names them. */
export interface RecordOperations {
  register: string;
  idPrefix: string;
  get: string;
  put: string;
  patch: string;
  delete: string;
}

function recordCalls(ops: RecordOperations): string {
  const path = `{ workspace_id: ws, id: ${JSON.stringify(`${ops.idPrefix}_generated_client`)} }`;
  return `  {
    const copy: Record<string, unknown> = { ...seeded(${JSON.stringify(ops.register)}), id: ${JSON.stringify(`${ops.idPrefix}_generated_client`)} };
    delete copy.created_at;
    delete copy.updated_at;
    await expect('${ops.put}', sdk.${ops.put}({ client, path: ${path}, body: copy as Parameters<typeof sdk.${ops.put}>[0]['body'] }), 201);
    const read = await expect('${ops.get}', sdk.${ops.get}({ client, path: ${path} }), 200);
    if (read.data?.id !== copy.id) throw new Error('${ops.get} read another record');
    const patched = await expect('${ops.patch}', sdk.${ops.patch}({ client, path: ${path}, headers: { 'If-Match': etag(read) }, body: {} }), 200);
    await expect('${ops.delete}', sdk.${ops.delete}({ client, path: ${path}, headers: { 'If-Match': etag(patched) } }), 204);
    await expect('${ops.get}', sdk.${ops.get}({ client, path: ${path} }), 404);
  }`;
}

export function internalProgram(registers: readonly RecordOperations[]): string {
  return `import { createClient, createConfig } from './client/client/index.js';
import * as sdk from './client/sdk.gen.js';

const client = createClient(createConfig({ baseUrl: process.env.BASE_URL as string, auth: () => process.env.OPERATOR_TOKEN as string }));
const ws = process.env.WORKSPACE_ID as string;
const calls: { operation: string; status: number }[] = [];

interface Answer<T> { data?: T; error?: unknown; response: Response }

/** Runs one call, records its operation and status, and fails unless the status is the one expected. */
async function expect<T>(operation: string, answer: Promise<Answer<T>>, status: number): Promise<Answer<T>> {
  const a = await answer;
  calls.push({ operation, status: a.response.status });
  if (a.response.status !== status) throw new Error(\`\${operation}: \${a.response.status}, not \${status}: \${JSON.stringify(a.error)}\`);
  return a;
}

function etag(a: Answer<unknown>): string {
  const value = a.response.headers.get('etag');
  if (value === null) throw new Error('no ETag');
  return value;
}

await expect('getHealth', sdk.getHealth({ client }), 200);
const ready = await expect('getReadiness', sdk.getReadiness({ client }), 200);
if (ready.data?.checks.database?.ok !== true) throw new Error('the database is not ready');
const metrics = await expect('getMetrics', sdk.getMetrics({ client }), 200);
if (!String(metrics.data).includes('# TYPE')) throw new Error('metrics are not in the Prometheus format');
await expect('getInternalOpenApi', sdk.getInternalOpenApi({ client }), 200);

const exported = await expect('exportRecords', sdk.exportRecords({ client, path: { workspace_id: ws }, parseAs: 'text' }), 200);
const text = String(exported.data);
const byRegister = new Map<string, Record<string, unknown>[]>();
for (const line of text.split('\\n').filter(Boolean)) {
  const op = JSON.parse(line) as { register: string; record: Record<string, unknown> };
  byRegister.set(op.register, [...(byRegister.get(op.register) ?? []), op.record]);
}
function seeded(register: string, where: (r: Record<string, unknown>) => boolean = () => true): Record<string, unknown> {
  const found = (byRegister.get(register) ?? []).find(where);
  if (!found) throw new Error(\`the export holds no fitting \${register} record\`);
  return found;
}
const idOf = (register: string, where: (r: Record<string, unknown>) => boolean) => seeded(register, where).id as string;

const report = await expect(
  'importRecords',
  sdk.importRecords({ client, path: { workspace_id: ws }, query: { dry_run: 'true' }, body: text, bodySerializer: null }),
  200,
);
if (report.data?.refused_count !== 0 || report.data.dry_run !== true) throw new Error(\`the export does not import: \${JSON.stringify(report.data)}\`);

${registers.map(recordCalls).join('\n')}

const asset = idOf('assets', (r) => r.status === 'AVAILABLE');
const person = idOf('people', (r) => r.status === 'ACTIVE');
const emitted = (a: Answer<{ events: string[] }>) => a.data?.events.length ?? 0;
const assigned = await expect('assetAssign', sdk.assetAssign({ client, body: { workspace_id: ws, asset, person } }), 200);
const returned = await expect('assetReturn', sdk.assetReturn({ client, body: { workspace_id: ws, asset } }), 200);
const request = idOf('purchase-requests', (r) => r.status === 'SUBMITTED');
const decided = await expect(
  'purchaseRequestDecide',
  sdk.purchaseRequestDecide({ client, body: { workspace_id: ws, request, decision: 'reject' } }),
  200,
);
const handover = idOf('handovers', (r) => r.status === 'SENT');
const acknowledged = await expect('handoverAcknowledge', sdk.handoverAcknowledge({ client, body: { workspace_id: ws, handover } }), 200);
const transition = idOf('transitions', (r) => r.status === 'DRAFT');
const started = await expect('transitionStart', sdk.transitionStart({ client, body: { workspace_id: ws, transition } }), 200);
const completed = await expect('transitionComplete', sdk.transitionComplete({ client, body: { workspace_id: ws, transition } }), 200);
const assignment = idOf('learning-assignments', (r) => r.status === 'ASSIGNED');
const learned = await expect('learningAcknowledge', sdk.learningAcknowledge({ client, body: { workspace_id: ws, assignment } }), 200);
await expect('assetReturn', sdk.assetReturn({ client, body: { workspace_id: ws, asset } }), 409);
const endpoint = process.env.ENDPOINT_ID as string;
const signatures = await expect(
  'setEndpointSignatures',
  sdk.setEndpointSignatures({ client, path: { workspace_id: ws, id: endpoint }, body: { standard_webhooks: true } }),
  200,
);
if (signatures.data?.standard_webhooks !== true) throw new Error('the endpoint does not carry the Standard Webhooks headers');
const filtered = await expect(
  'setEndpointFilter',
  sdk.setEndpointFilter({ client, path: { workspace_id: ws, id: endpoint }, body: { filter: { type: 'asset.assigned' } } }),
  200,
);
if ((filtered.data?.filter as { type?: string } | null)?.type !== 'asset.assigned') throw new Error('the filter was not set');
await expect('setEndpointFilter', sdk.setEndpointFilter({ client, path: { workspace_id: ws, id: endpoint }, body: { filter: null } }), 200);
const listed = await expect('listEndpoints', sdk.listEndpoints({ client, path: { workspace_id: ws } }), 200);
if (!listed.data?.data.some((e) => e.id === endpoint)) throw new Error('the endpoint is not listed');
const made = await expect(
  'createEndpoint',
  sdk.createEndpoint({
    client,
    path: { workspace_id: ws },
    body: { url: 'http://127.0.0.1:9/second', scopes: ['assets:read'], events: ['asset.assigned'] },
  }),
  201,
);
if (!made.data?.secret.startsWith('whsec_')) throw new Error('no signing secret in the registration answer');
const events = [assigned, returned, decided, acknowledged, started, completed, learned].map(emitted);

process.stdout.write(JSON.stringify({ calls, events }));
`;
}
