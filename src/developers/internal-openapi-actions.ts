/**
 * The domain actions in the internal document: one operation per action of the table the CLI
 * and `POST /internal/v1/actions/{action}` run (actions/domain), its body derived from the
 * action's argument specs, so an action added there is described here without a second list.
 */
import { ACTIONS, type OptionSpec } from '../actions/domain/index.js';
import { REGISTERS } from '../registers/catalogue.js';
import { ID_PATTERN_BODY, type JsonSchema } from '../registers/fields.js';
import { only, schemaRef, WITH_JSON_BODY } from './internal-openapi-responses.js';
import { INSTANT_EDGES, INSTANT_PATTERN } from './openapi.js';

/** `purchase_request.decide` -> `purchaseRequestDecide`. */
export function actionOperationId(name: string): string {
  return name.replace(/[._]([a-z])/g, (_, c: string) => c.toUpperCase());
}

function argumentSchema(option: OptionSpec): JsonSchema {
  const description = `${option.description[0]?.toUpperCase()}${option.description.slice(1)}.`;
  switch (option.kind) {
    case 'id':
      return { type: 'string', pattern: `^${option.prefix}_${ID_PATTERN_BODY}$`, description };
    case 'timestamp':
      return {
        type: 'string',
        format: 'date-time',
        pattern: INSTANT_PATTERN,
        description: `${description} With an offset; no leap second (\`:60\`). ${INSTANT_EDGES}`,
      };
    case 'choice': {
      // The CLI's help names the choices in the description; the enum names them here.
      const choices = [...(option.choices ?? [])];
      const own = option.description === choices.join('|') ? '' : `${description} `;
      return { type: 'string', enum: choices, description: `${own}Case-insensitive.` };
    }
    case 'integer':
      return { type: 'integer', minimum: option.min, maximum: option.max, description };
  }
}

function actionBody(name: string, options: readonly OptionSpec[]): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    description: `The arguments of \`${name}\` (the CLI's \`wsops act ${name}\` flags, snake_case) and the workspace to act in. An unknown member is a 400 \`unknown_parameter\`.`,
    required: ['workspace_id', ...options.filter((o) => o.required).map((o) => o.name)],
    properties: {
      workspace_id: { type: 'string', pattern: `^wsp_${ID_PATTERN_BODY}$`, description: 'The workspace to act in.' },
      ...Object.fromEntries(options.map((o) => [o.name, argumentSchema(o)])),
    },
  };
}

/** components/schemas the action operations refer to: each action's body, and the one result. */
export function actionSchemas(): Record<string, JsonSchema> {
  const schemas: Record<string, JsonSchema> = {
    ActionResult: {
      type: 'object',
      additionalProperties: false,
      required: ['records', 'events'],
      properties: {
        records: {
          type: 'array',
          description: 'Every record the action wrote, as /api/v1 returns it, in the order first written.',
          items: { anyOf: REGISTERS.map((r) => schemaRef(r.resource)) },
        },
        events: {
          type: 'array',
          description:
            'The ids of the events the action emitted (in the same transaction as its writes); empty for a decision that emits none.',
          items: { type: 'string', pattern: '^evt_' },
        },
      },
    },
  };
  for (const action of Object.values(ACTIONS)) {
    const id = actionOperationId(action.name);
    schemas[`${id[0]?.toUpperCase()}${id.slice(1)}Arguments`] = actionBody(action.name, action.options);
  }
  return schemas;
}

/** paths of the action operations: `/internal/v1/actions/asset.assign` and the others. */
export function actionPaths(): Record<string, JsonSchema> {
  const paths: Record<string, JsonSchema> = {};
  for (const action of Object.values(ACTIONS)) {
    const id = actionOperationId(action.name);
    paths[`/internal/v1/actions/${action.name}`] = {
      post: {
        operationId: id,
        tags: ['actions'],
        summary: `${action.name}: ${action.description.replace(/ \(.*\)$/, '')}`,
        description: `${action.description[0]?.toUpperCase()}${action.description.slice(1)}. One transaction: the register writes, the audit entry (actor \`operator\`) and the events commit together or not at all. Refused with 409 \`invalid_state\` when the record's state does not allow it, changing nothing.`,
        requestBody: {
          required: true,
          content: { 'application/json': { schema: schemaRef(`${id[0]?.toUpperCase()}${id.slice(1)}Arguments`) } },
        },
        responses: {
          '200': {
            description: 'Done: the records written and the events emitted.',
            headers: { 'Request-Id': { $ref: '#/components/headers/Request-Id' } },
            content: { 'application/json': { schema: schemaRef('ActionResult') } },
          },
          ...WITH_JSON_BODY,
          '409': only('Conflict'),
        },
      },
    };
  }
  return paths;
}
