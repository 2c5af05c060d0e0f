/**
 * The deletions feeds' part of the OpenAPI document (`GET /api/v1/{register}/deletions`), derived
 * from each register as its list is: the operation, the shared tombstone schemas and the `since`
 * parameter. The rule a consumer applies is stated here once and in docs/api.md.
 */
import type { Register } from '../registers/define.js';
import type { JsonSchema } from '../registers/fields.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** What a consumer does with the feed, and how a re-created record comes out right. */
export const DELETIONS_RULE =
  "Apply a tombstone only over an older copy: delete your copy of `id` when its `updated_at` is older than `deleted_at` (`deleted_at` is always later than the deleted record's last `updated_at`). A record written again under a deleted id leaves the feed in that write's transaction (it is in the list again, with a newer `updated_at`); deleted again, it comes back with the later `deleted_at`. Tombstones are kept `WSOPS_DELETION_RETENTION_DAYS` (default 90, at least 30); a `since` before that horizon, also on a cursor's later pages, is 400 `deletions_beyond_retention`: walk the list in full, drop what it did not return, then follow this feed without `since`.";

export const DELETIONS_SCHEMAS: Record<string, JsonSchema> = {
  Tombstone: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'deleted_at'],
    description: 'A deleted record: its id and when it was deleted.',
    properties: {
      id: { type: 'string', description: 'The id the deleted record had (a record of this register).' },
      deleted_at: {
        type: 'string',
        format: 'date-time',
        description: "When the record was deleted (ISO 8601 UTC with milliseconds), always later than the record's last `updated_at`.",
      },
    },
  },
  TombstoneList: {
    type: 'object',
    additionalProperties: false,
    required: ['data', 'has_more', 'next_cursor'],
    properties: {
      data: { type: 'array', items: ref('Tombstone') },
      has_more: { type: 'boolean', description: 'True when another page exists.' },
      next_cursor: {
        type: ['string', 'null'],
        description: 'Pass as `cursor` to get the next page. Null exactly when `has_more` is false.',
      },
    },
  },
};

/** The `since` parameter of the feeds: `updated_since`'s format and rules, compared with `deleted_at`. */
export function sinceParameter(instantPattern: string): JsonSchema {
  return {
    name: 'since',
    in: 'query',
    required: false,
    description:
      'ISO 8601 instant with an offset, read exactly as `updated_since` is (the same 400s); only tombstones with `deleted_at` strictly after it. Before the retention horizon it is a 400 `deletions_beyond_retention`.',
    schema: { type: 'string', format: 'date-time', pattern: instantPattern },
  };
}

export function deletionsPath(r: Register, errors: Record<string, unknown>): JsonSchema {
  return {
    get: {
      operationId: `list${r.resource}Deletions`,
      summary: `List deleted ${r.path.replace(/-/g, ' ')}`,
      description: `The ids of deleted ${r.path.replace(/-/g, ' ')}, ordered by ascending \`(deleted_at, id)\`: the tombstones an incremental sync applies, since lists and events never show a deletion. Paged and synced like the list: the same key and scope (\`${r.scope}\`), \`limit\`, a signed cursor bound to this feed (a list's cursor is \`invalid_cursor\` here, and this feed's on the list), unknown parameters are a 400. ${DELETIONS_RULE} When the \`${r.module}\` module is not installed the feed is empty.`,
      tags: [r.path],
      security: [{ bearerAuth: [r.scope] }],
      parameters: [
        { $ref: '#/components/parameters/limit' },
        { $ref: '#/components/parameters/cursor' },
        { $ref: '#/components/parameters/since' },
      ],
      responses: {
        '200': {
          description: 'A page of tombstones.',
          headers: {
            'Request-Id': { $ref: '#/components/headers/Request-Id' },
            RateLimit: { $ref: '#/components/headers/RateLimit' },
            'RateLimit-Policy': { $ref: '#/components/headers/RateLimit-Policy' },
          },
          content: { 'application/json': { schema: ref('TombstoneList') } },
        },
        ...errors,
      },
    },
  };
}
