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
    'urn:wsops:scim:notes': {
      filterAttributes: FILTER_ATTRIBUTES,
      filterOperators: FILTER_OPERATORS,
      groups: GROUPS_UNSUPPORTED,
      delete: DELETE_RULE,
    },
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

const attr = (name: string, type: string, extra: Record<string, unknown> = {}) => ({
  name,
  type,
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...extra,
});

function userSchema(baseUrl: string) {
  const sub = (name: string, type = 'string', extra: Record<string, unknown> = {}) => attr(name, type, extra);
  const multi = (name: string, description: string) =>
    attr(name, 'complex', {
      multiValued: true,
      description,
      subAttributes: [sub('value'), sub('type', 'string', { canonicalValues: ['work'] }), sub('primary', 'boolean')],
    });
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'],
    id: USER_SCHEMA,
    name: 'User',
    description:
      'A person. Attributes not listed here are accepted and ignored when they belong to the core User schema, refused otherwise.',
    attributes: [
      attr('id', 'string', { caseExact: true, mutability: 'readOnly', returned: 'always', uniqueness: 'server' }),
      attr('externalId', 'string', { caseExact: true, description: "The identity provider's id of the user." }),
      attr('userName', 'string', {
        required: true,
        uniqueness: 'server',
        description: 'The work email; unique in the workspace, ignoring case.',
      }),
      attr('name', 'complex', {
        subAttributes: [sub('givenName'), sub('familyName'), sub('formatted', 'string', { mutability: 'readOnly' })],
      }),
      attr('displayName', 'string'),
      attr('title', 'string', { description: 'The job title.' }),
      multi('emails', 'One work email: the same address as userName; changing one changes the other.'),
      multi('phoneNumbers', 'One work phone number (the work entry, else the primary, else the only one).'),
      attr('active', 'boolean', { description: 'true: status ACTIVE; false: INACTIVE.' }),
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
      attr('employeeNumber', 'string', { caseExact: true }),
      attr('manager', 'complex', {
        description: "The manager: value is the manager's User id in this service.",
        subAttributes: [attr('value', 'string', { caseExact: true }), attr('$ref', 'reference', { mutability: 'readOnly' })],
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
