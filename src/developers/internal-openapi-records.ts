/**
 * The direct record writes of the internal document: each register's record, write and patch
 * schemas, and the path of one record (read, create or replace, change fields of, delete), all
 * derived from the register declarations.
 */
import { REGISTERS } from '../registers/catalogue.js';
import type { Register } from '../registers/define.js';
import { ID_PATTERN_BODY, type JsonSchema } from '../registers/fields.js';
import { patchSchemaOf, writeSchemaOf } from '../registers/record-input.js';
import { only, schemaRef as ref, WITH_JSON_BODY, WITH_PATH } from './internal-openapi-responses.js';

const aOrAn = (noun: string) => `${/^[AEIOU]/.test(noun) ? 'an' : 'a'} ${noun}`;
const record = (r: Register, description: string) => ({
  description,
  headers: { ETag: { $ref: '#/components/headers/ETag' }, 'Request-Id': { $ref: '#/components/headers/Request-Id' } },
  content: { 'application/json': { schema: ref(r.resource) } },
});
/** What a PUT or a PATCH can meet besides a read: a stale If-Match, a record its register refuses. */
const writeResponses = () => ({ ...WITH_JSON_BODY, '412': only('PreconditionFailed'), '422': only('InvalidRecord') });

/** Per register: the record as stored, the body of a PUT and the body of a PATCH. */
export function recordSchemas(): Record<string, JsonSchema> {
  const schemas: Record<string, JsonSchema> = {};
  for (const r of REGISTERS) {
    schemas[r.resource] = r.recordSchema();
    schemas[`${r.resource}Write`] = writeSchemaOf(r);
    schemas[`${r.resource}Patch`] = patchSchemaOf(r);
  }
  return schemas;
}

/** Per register: the path of one record and its four operations. */
export function recordPaths(): Record<string, JsonSchema> {
  const paths: Record<string, JsonSchema> = {};
  for (const r of REGISTERS) {
    paths[`/internal/v1/workspaces/{workspace_id}/${r.path}/{id}`] = {
      parameters: [{ $ref: '#/components/parameters/workspace_id' }, idParameter(r)],
      get: readRecord(r),
      put: putRecord(r),
      patch: patchRecord(r),
      delete: deleteRecord(r),
    };
  }
  return paths;
}

function idParameter(r: Register): JsonSchema {
  return {
    name: 'id',
    in: 'path',
    required: true,
    schema: { type: 'string', pattern: `^${r.idPrefix}_${ID_PATTERN_BODY}$` },
    description: `The caller's id: \`${r.idPrefix}_\` followed by the source system's own identifier.`,
  };
}

function readRecord(r: Register): JsonSchema {
  return {
    operationId: `get${r.resource}`,
    tags: [r.path],
    summary: `Read one ${r.resource} with its ETag`,
    description:
      'The record as stored, the same object as /api/v1 returns, with its ETag (send it back as If-Match to write only over this version).',
    responses: { '200': record(r, 'The stored record.'), ...WITH_PATH },
  };
}

function putRecord(r: Register): JsonSchema {
  return {
    operationId: `put${r.resource}`,
    tags: [r.path],
    summary: `Create or replace ${aOrAn(r.resource)}`,
    description:
      'A direct write: moves `updated_at`, emits no event. The body is the record as /api/v1 returns it; `created_at` and `updated_at` are stamped by wsops (ignored when sent), derived fields are computed (a different value is a 422), nullable fields default to null and lists to empty. An identical record changes nothing (`updated_at` stays).',
    parameters: [{ $ref: '#/components/parameters/If-Match' }, { $ref: '#/components/parameters/If-None-Match' }],
    requestBody: { required: true, content: { 'application/json': { schema: ref(`${r.resource}Write`) } } },
    responses: {
      '200': record(r, 'Replaced (or unchanged).'),
      '201': record(r, 'Created.'),
      ...writeResponses(),
    },
  };
}

function patchRecord(r: Register): JsonSchema {
  return {
    operationId: `patch${r.resource}`,
    tags: [r.path],
    summary: `Change fields of ${aOrAn(r.resource)} (JSON merge patch, RFC 7396)`,
    description:
      'Members replace, `null` removes (a nullable field becomes null, a list empty, a derived field is computed again; a field without a default is a 422), arrays replace whole. Every field is optional; `created_at` and `updated_at` are stamped by wsops. `application/json` is accepted too.',
    parameters: [{ $ref: '#/components/parameters/If-Match' }],
    requestBody: {
      required: true,
      content: {
        'application/merge-patch+json': { schema: ref(`${r.resource}Patch`) },
        'application/json': { schema: ref(`${r.resource}Patch`) },
      },
    },
    responses: { '200': record(r, 'The changed record.'), ...writeResponses() },
  };
}

function deleteRecord(r: Register): JsonSchema {
  return {
    operationId: `delete${r.resource}`,
    tags: [r.path],
    summary: `Delete ${aOrAn(r.resource)}`,
    description:
      'The record leaves every list and detail; no event. A record that other records still name (every `*_id` and `*_ids` field of a register, nested items included, that names a register) is not deleted: 409 `referenced` with `referrers`. Point those records elsewhere or delete them first.',
    parameters: [{ $ref: '#/components/parameters/If-Match' }],
    responses: {
      '204': { description: 'Deleted.', headers: { 'Request-Id': { $ref: '#/components/headers/Request-Id' } } },
      ...WITH_PATH,
      '409': only('Referenced'),
      '412': only('PreconditionFailed'),
    },
  };
}
