/**
 * The discovery documents (RFC 7644 §4, RFC 7643 §5–7): what this service provider does, said
 * exactly, so an identity provider (and its administrator) can tell before the first write.
 */
import { FILTER_ATTRIBUTES, FILTER_OPERATORS } from './filter.js';
import { ENTERPRISE_SCHEMA, USER_SCHEMA } from './users.js';

export const MAX_RESULTS = 200;
const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

export const GROUPS_UNSUPPORTED =
  'Groups are not supported: a person belongs to one team (team_id), while SCIM groups are many-to-many, so pushing groups would move people between teams in an order nobody chose. Teams come from the system of record; provision Users only (turn group push or group provisioning off).';

export const DELETE_RULE =
  'DELETE removes a person no other record names. A person other records name (an asset holder, an approver, a manager) is kept as INACTIVE and is no longer visible through SCIM; both answer 204.';

export function serviceProviderConfig(baseUrl: string) {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'SCIM token',
        description:
          'Authorization: Bearer svc_scim_... (a workspace SCIM token from the console or wsops scim token create; API keys are not accepted).',
        specUri: 'https://www.rfc-editor.org/rfc/rfc6750',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${baseUrl}/scim/v2/ServiceProviderConfig` },
  };
}

function userResourceType(baseUrl: string) {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
    id: 'User',
    name: 'User',
    endpoint: '/Users',
    description: `A person of the people register. ${DELETE_RULE}`,
    schema: USER_SCHEMA,
    schemaExtensions: [{ schema: ENTERPRISE_SCHEMA, required: false }],
    meta: { resourceType: 'ResourceType', location: `${baseUrl}/scim/v2/ResourceTypes/User` },
  };
}

/** An attribute with every characteristic RFC 7643 §7 names, so a client can build its model from it alone. */
const attr = (name: string, type: string, description: string, extra: Record<string, unknown> = {}) => ({
  name,
  type,
  multiValued: false,
  description,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...extra,
});

function userSchema(baseUrl: string) {
  const entries = (name: string, description: string) =>
    attr(name, 'complex', description, {
      multiValued: true,
      subAttributes: [
        attr('value', 'string', `The ${name === 'emails' ? 'address' : 'number'}.`),
        attr('type', 'string', 'work: the entry wsops keeps.', { canonicalValues: ['work'] }),
        attr('primary', 'boolean', 'Whether this is the primary entry.'),
      ],
    });
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'],
    id: USER_SCHEMA,
    name: 'User',
    description: `A person of the people register. Core attributes not listed here are accepted and ignored; others are refused. Filters compare ${FILTER_ATTRIBUTES.join(', ')} with ${FILTER_OPERATORS.join(', ')}. ${GROUPS_UNSUPPORTED} ${DELETE_RULE}`,
    attributes: [
      attr('id', 'string', "The person's id in wsops.", {
        caseExact: true,
        mutability: 'readOnly',
        returned: 'always',
        uniqueness: 'server',
      }),
      attr('externalId', 'string', "The identity provider's id of the user.", { caseExact: true }),
      attr('userName', 'string', "The identity provider's unique name for the user (any text); unique in the workspace, ignoring case.", {
        required: true,
        uniqueness: 'server',
      }),
      attr('name', 'complex', "The person's name.", {
        subAttributes: [
          attr('givenName', 'string', 'The given name.'),
          attr('familyName', 'string', 'The family name.'),
          attr('formatted', 'string', 'The given and family name.', { mutability: 'readOnly' }),
        ],
      }),
      attr('displayName', 'string', 'The name shown for the person.'),
      attr('title', 'string', 'The job title.'),
      entries(
        'emails',
        'The work email: the work entry, else the primary one, else the only one. wsops keeps one; a User without one takes its userName when that is an address.',
      ),
      entries('phoneNumbers', 'One work phone number (the work entry, else the primary, else the only one).'),
      attr('active', 'boolean', 'true: status ACTIVE; false: INACTIVE.'),
    ],
    meta: { resourceType: 'Schema', location: `${baseUrl}/scim/v2/Schemas/${USER_SCHEMA}` },
  };
}

function enterpriseSchema(baseUrl: string) {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'],
    id: ENTERPRISE_SCHEMA,
    name: 'EnterpriseUser',
    description: 'Of the enterprise extension, employeeNumber and manager are kept; its other attributes are accepted and ignored.',
    attributes: [
      attr('employeeNumber', 'string', 'The employee number.', { caseExact: true }),
      attr('manager', 'complex', "The person's manager, a User of this workspace (not the User itself).", {
        subAttributes: [
          attr('value', 'string', "The manager's User id.", { caseExact: true }),
          attr('$ref', 'reference', "The manager's User resource.", { caseExact: true, mutability: 'readOnly', referenceTypes: ['User'] }),
        ],
      }),
    ],
    meta: { resourceType: 'Schema', location: `${baseUrl}/scim/v2/Schemas/${ENTERPRISE_SCHEMA}` },
  };
}

export function listOf(resources: readonly unknown[]) {
  return { schemas: [LIST_SCHEMA], totalResults: resources.length, startIndex: 1, itemsPerPage: resources.length, Resources: resources };
}

export const resourceTypes = (baseUrl: string) => [userResourceType(baseUrl)];
export const schemas = (baseUrl: string) => [userSchema(baseUrl), enterpriseSchema(baseUrl)];
