/** Shared by the write-side tests: the internal listener with an operator token, and small valid records. */
import type { FastifyInstance } from 'fastify';
import { buildInternalApp } from '../../src/http/internal-app.js';
import type { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const TOKEN = 'op-token-0123456789abcdef-0123456789abcdef';

export interface Writer {
  h: Harness;
  internal: FastifyInstance;
  write(
    method: 'PUT' | 'PATCH' | 'DELETE' | 'GET',
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
    // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  ): Promise<{ status: number; headers: Record<string, unknown>; json: any; body: string }>;
}

export async function createWriter(dialect: (typeof DIALECTS)[number]): Promise<Writer> {
  const h = await createHarness(dialect, { WSOPS_OPERATOR_TOKEN: TOKEN });
  const internal = buildInternalApp(h.services);
  await internal.ready();
  return {
    h,
    internal,
    async write(method, path, body, headers = {}) {
      const res = await internal.inject({
        method,
        url: `/internal/v1/workspaces/${path}`,
        headers: {
          authorization: `Bearer ${TOKEN}`,
          ...(body === undefined ? {} : { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' }),
          ...headers,
        },
        payload: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const ct = String(res.headers['content-type'] ?? '');
      return { status: res.statusCode, headers: res.headers, body: res.body, json: ct.includes('json') ? JSON.parse(res.body) : undefined };
    },
  };
}

export const TEST_TOKEN = TOKEN;

/** A minimal valid record of each kind the tests write. */
export function site(id: string, name = 'Harbour Office') {
  return { id, name, kind: 'SITE', parent_id: null, timezone: 'Europe/Berlin', address: null };
}
export function person(id: string, locationId: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    display_name: 'Ada Quill',
    given_name: 'Ada',
    family_name: 'Quill',
    work_email: 'ada.quill@example.com',
    job_title: 'Engineer',
    location_id: locationId,
    status: 'ACTIVE',
    start_date: '2024-02-01',
    ...extra,
  };
}
export function vendor(id: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    name: 'Paperclip Cloud',
    category: 'SOFTWARE',
    status: 'ACTIVE',
    annual_cost_minor: 120000,
    currency: 'EUR',
    contract_start_date: '2025-01-01',
    renewal_date: '2027-01-01',
    notice_period_days: 30,
    auto_renews: true,
    ...extra,
  };
}
