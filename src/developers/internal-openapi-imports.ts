/**
 * Import and export in the internal document: the NDJSON line both speak, the import's report
 * with its refused and repeated lines, and the two paths.
 */
import { NDJSON_TYPE } from '../media-types.js';
import type { JsonSchema } from '../registers/fields.js';
import { adapterOf } from '../store/database.js';
import { EXPORT_ORDER } from '../writes/export.js';
import { ATOMIC_MAX_LINES, MAX_LINE_BYTES, MAX_REPORTED_REFUSALS } from '../writes/import.js';
import { REFERRER_IDS_LISTED } from '../writes/referrers.js';
import { fieldCodeSchema, schemaRef as ref, WITH_JSON_BODY, WITH_PATH } from './internal-openapi-responses.js';

/** An import's line, its report and what the report lists. */
export function importSchemas(): Record<string, JsonSchema> {
  return {
    ImportLine: importLineSchema(),
    ImportReport: importReportSchema(),
    RefusedLine: {
      type: 'object',
      additionalProperties: false,
      required: ['line', 'pointer', 'code', 'detail'],
      properties: {
        line: { type: 'integer', minimum: 1 },
        pointer: { type: 'string', description: 'JSON pointer into the line (`/record/manager_id`); empty for the whole line.' },
        code: fieldCodeSchema(),
        detail: { type: 'string' },
        referrers: { type: 'array', items: ref('Referrers'), description: 'A refused delete (`referenced`): who still names the record.' },
      },
    },
    Referrers: {
      type: 'object',
      additionalProperties: false,
      required: ['register', 'field', 'count', 'ids'],
      description: 'Records that still name a record, in one register and field.',
      properties: {
        register: { type: 'string' },
        field: {
          type: 'string',
          description: 'The reference field: `manager_id`, `approvers[].person_id` (an item of a list), `person_ids`.',
        },
        count: { type: 'integer', minimum: 1 },
        ids: {
          type: 'array',
          maxItems: REFERRER_IDS_LISTED,
          items: { type: 'string' },
          description: `The first ${REFERRER_IDS_LISTED} ids, sorted.`,
        },
      },
    },
    RepeatedId: {
      type: 'object',
      additionalProperties: false,
      required: ['line', 'first_line', 'register', 'id', 'detail'],
      properties: {
        line: { type: 'integer', minimum: 1 },
        first_line: { type: 'integer', minimum: 1 },
        register: { type: 'string' },
        id: { type: 'string' },
        detail: { type: 'string' },
      },
    },
  };
}

export function importExportPaths(): Record<string, JsonSchema> {
  return {
    '/internal/v1/workspaces/{workspace_id}/import': importPath(),
    '/internal/v1/workspaces/{workspace_id}/export': exportPath(),
  };
}

function importLineSchema(): JsonSchema {
  return {
    description: 'One line of an import: an upsert of a whole record (as PUT takes it) or a delete by id.',
    oneOf: [
      {
        type: 'object',
        additionalProperties: false,
        required: ['register', 'op', 'record'],
        properties: { register: { enum: [...EXPORT_ORDER] }, op: { const: 'upsert' }, record: { type: 'object' } },
      },
      {
        type: 'object',
        additionalProperties: false,
        required: ['register', 'op', 'id'],
        properties: { register: { enum: [...EXPORT_ORDER] }, op: { const: 'delete' }, id: { type: 'string' } },
      },
    ],
  };
}

const counts = (names: string[]) => ({
  type: 'object',
  additionalProperties: false,
  required: names,
  properties: Object.fromEntries(names.map((n) => [n, { type: 'integer' }])),
});

function importReportSchema(): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required: [
      'id',
      'workspace_id',
      'dry_run',
      'atomic',
      'keep_timestamps',
      'committed',
      'lines',
      'counts',
      'refused_count',
      'refused',
      'refused_truncated',
      'repeated_count',
      'repeated',
      'started_at',
      'finished_at',
    ],
    properties: {
      id: { type: 'string', pattern: '^imp_' },
      workspace_id: { type: 'string' },
      dry_run: { type: 'boolean' },
      atomic: { type: 'boolean' },
      keep_timestamps: { type: 'boolean' },
      committed: {
        type: 'boolean',
        description: 'False for a dry run, and for an atomic import with a refused line (then nothing was written).',
      },
      lines: {
        type: 'integer',
        description:
          "How many lines held an operation, refused ones included. Blank lines, and a CSV file's header row, are not counted; `refused[].line` is still the line's (or the CSV row's) number in the file.",
      },
      counts: {
        type: 'object',
        description: 'Per register: what each line did. A line superseded by a later line for the same id counts as unchanged.',
        additionalProperties: {
          type: 'object',
          additionalProperties: false,
          required: ['upsert', 'delete', 'refused'],
          properties: {
            upsert: counts(['created', 'updated', 'unchanged']),
            delete: counts(['deleted', 'absent']),
            refused: { type: 'integer' },
          },
        },
      },
      refused_count: { type: 'integer', description: 'How many lines were refused.' },
      refused: {
        type: 'array',
        description:
          'Why lines were refused, one entry per fault: a line with two faults (a missing field and an unknown one) has two entries with its line number. The first 1,000 entries are listed; every refused line is counted in refused_count.',
        items: ref('RefusedLine'),
      },
      refused_truncated: { type: 'boolean', description: 'Whether faults were left out of refused (over 1,000).' },
      repeated_count: { type: 'integer', description: 'How many upsert lines wrote an id an earlier line of the same import wrote.' },
      repeated: {
        type: 'array',
        description: `Upsert lines of an id written before in the same import, with both line numbers. They are applied: the last line for an id wins. The first ${MAX_REPORTED_REFUSALS} are listed.`,
        items: ref('RepeatedId'),
      },
      started_at: { type: 'string', format: 'date-time' },
      finished_at: { type: 'string', format: 'date-time' },
    },
  };
}

/** The body of an import and of an export. */
function ndjsonBody(): JsonSchema {
  // OpenAPI 3.1 has no schema for each line of a line-delimited body (3.2's itemSchema); JSON
  // Schema's contentSchema names what the text holds.
  return {
    type: 'string',
    contentMediaType: NDJSON_TYPE,
    contentSchema: ref('ImportLine'),
    description: 'One JSON `ImportLine` a line.',
  };
}

function importPath(): JsonSchema {
  return {
    parameters: [{ $ref: '#/components/parameters/workspace_id' }],
    post: {
      operationId: 'importRecords',
      tags: ['import and export'],
      summary: 'Import records (NDJSON, streamed)',
      description: `One operation a line (\`ImportLine\`), at most ${MAX_LINE_BYTES} bytes each. Applied in batches of ${adapterOf('sqlite').importBatchLines} lines (SQLite) or ${adapterOf('postgres').importBatchLines} (PostgreSQL), each its own short transaction; a reference may name a record written later in the same import. The same import twice changes nothing the second time. Always 200 once read: \`refused\` lists what was not applied.`,
      parameters: [
        {
          name: 'atomic',
          in: 'query',
          schema: { type: 'string', enum: ['true', 'false'] },
          description: `All or nothing, in one transaction; at most ${ATOMIC_MAX_LINES} lines (413 beyond).`,
        },
        {
          name: 'dry_run',
          in: 'query',
          schema: { type: 'string', enum: ['true', 'false'] },
          description: 'Check everything, write nothing.',
        },
        {
          name: 'keep_timestamps',
          in: 'query',
          schema: { type: 'string', enum: ['true', 'false'] },
          description:
            "Keep each record's `created_at` and `updated_at` as given (required in every record): for moving a workspace into one no client syncs yet, since records stamped before a mirror's watermark are not seen by its next `updated_since` walk.",
        },
      ],
      requestBody: {
        required: true,
        description: 'NDJSON: each line is an `ImportLine` (components/schemas/ImportLine).',
        content: { [NDJSON_TYPE]: { schema: ndjsonBody() } },
      },
      responses: {
        '200': { description: "The import's report.", content: { 'application/json': { schema: ref('ImportReport') } } },
        ...WITH_JSON_BODY,
      },
    },
  };
}

function exportPath(): JsonSchema {
  return {
    parameters: [{ $ref: '#/components/parameters/workspace_id' }],
    get: {
      operationId: 'exportRecords',
      tags: ['import and export'],
      summary: "Export records as NDJSON upserts (the import's format)",
      description: `Registers in the order ${EXPORT_ORDER.join(', ')} (parents first), each in (updated_at, id) order. Import it with keep_timestamps=true to get byte-for-byte the same records.`,
      parameters: [
        {
          name: 'registers',
          in: 'query',
          // A comma-separated list: what OpenAPI calls a form-style array, not exploded.
          style: 'form',
          explode: false,
          schema: { type: 'array', minItems: 1, items: { type: 'string', enum: [...EXPORT_ORDER] } },
          description:
            'The registers to export, separated by commas without spaces (`registers=people,locations`); leave the parameter out for every register. Exported parents first whatever the order given; a name given twice is exported once. An empty value, an empty name (`people,,assets`) or an unknown one is a 400 `invalid_parameter`.',
        },
      ],
      responses: {
        '200': {
          description: 'NDJSON, one upsert a line (each an `ImportLine`).',
          content: { [NDJSON_TYPE]: { schema: ndjsonBody() } },
        },
        ...WITH_PATH,
      },
    },
  };
}
