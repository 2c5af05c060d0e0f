/**
 * A person as a SCIM User and back (RFC 7643 §4.1, the enterprise extension §4.3): which
 * attributes wsops keeps, which core attributes it accepts and ignores, and which it refuses.
 *
 * The people register keeps one work email: `userName` is that email, and so is the work entry
 * of `emails`. What SCIM says that the register has no field for (externalId, employeeNumber)
 * is kept beside the person (table scim_people).
 */

import { controlCharacterIn } from '../text-rules.js';
import type { RecordObject } from '../writes/records.js';
import { invalidSyntax, invalidValue, ScimError } from './errors.js';

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const ENTERPRISE_SCHEMA = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

/** Core attributes wsops stores (the Schemas document lists exactly these). */
export const KEPT = ['id', 'externalId', 'userName', 'name', 'displayName', 'title', 'emails', 'phoneNumbers', 'active'] as const;
/**
 * Core attributes identity providers send by default that the people register has no place for:
 * accepted and dropped, so a default Okta or Entra mapping provisions without edits.
 */
export const IGNORED = [
  'nickName',
  'profileUrl',
  'userType',
  'preferredLanguage',
  'locale',
  'timezone',
  'password',
  'ims',
  'photos',
  'addresses',
  'groups',
  'entitlements',
  'roles',
  'x509Certificates',
  'meta',
  'schemas',
] as const;
/** The ignored core attributes that are multi-valued (a PATCH path may select their entries). */
export const IGNORED_MULTI_VALUED: readonly (typeof IGNORED)[number][] = [
  'ims',
  'photos',
  'addresses',
  'groups',
  'entitlements',
  'roles',
  'x509Certificates',
  'schemas',
];
export const NAME_PARTS = ['givenName', 'familyName', 'formatted', 'middleName', 'honorificPrefix', 'honorificSuffix'] as const;
/** The sub-attributes read of an entry of emails and phoneNumbers. */
export const ENTRY_PARTS = ['value', 'type', 'primary', 'display'] as const;
/** Of the enterprise extension, the attributes kept; the others of ENTERPRISE_PARTS are accepted and ignored. */
export const ENTERPRISE_KEPT = ['employeeNumber', 'manager'] as const;
export const ENTERPRISE_PARTS = [...ENTERPRISE_KEPT, 'costCenter', 'organization', 'division', 'department'] as const;
export const MANAGER_PARTS = ['value', '$ref', 'displayName'] as const;

/** What SCIM holds about a person beyond the register. */
export interface ScimLink {
  external_id: string | null;
  employee_number: string | null;
  /** The userName SCIM wrote (unique per workspace ignoring case); null: the work email stands for it. */
  user_name: string | null;
}

/** The person's fields and link a SCIM User body asks for. */
export interface UserWrite {
  person: RecordObject;
  link: ScimLink;
}

export interface UserContext {
  /** The stored person, on a replace or patch. */
  current?: RecordObject;
  /** What SCIM holds beside the stored person. */
  currentLink?: ScimLink;
  /** A PUT: attributes the body leaves out keep their stored values (see userToPerson). */
  absentKeeps?: boolean;
  /** Where a new person is placed (the token's location). */
  locationId: string;
  /** Today, for a new person's start_date. */
  today: string;
  /** The scimType for an unknown attribute: invalidPath for a PATCH, invalidSyntax for a body. */
  unknownAs?: 'invalidPath' | 'invalidSyntax';
}

/** Renames an object's keys to their declared spelling (SCIM attribute names ignore case); refuses others. */
function canonical(value: unknown, names: readonly string[], where: string, unknownAs: 'invalidPath' | 'invalidSyntax'): RecordObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidValue(`${where} must be a JSON object.`);
  const byLower = new Map(names.map((n) => [n.toLowerCase(), n]));
  const out: RecordObject = {};
  for (const [k, v] of Object.entries(value as RecordObject)) {
    const name = k.startsWith('urn:')
      ? k.toLowerCase() === ENTERPRISE_SCHEMA.toLowerCase()
        ? ENTERPRISE_SCHEMA
        : undefined
      : byLower.get(k.toLowerCase());
    if (name === undefined) {
      const shown = JSON.stringify(k.slice(0, 60));
      const text = `${where} has no attribute ${shown}; wsops keeps ${KEPT.join(', ')} and the enterprise employeeNumber and manager.`;
      throw unknownAs === 'invalidPath' ? new ScimError(400, text, 'invalidPath') : invalidSyntax(text);
    }
    out[name] = v;
  }
  return out;
}

/** A string attribute: absent and null are undefined; control characters and over-long text refused. */
function text(value: unknown, name: string, max = 1000): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalidValue(`${name} must be a string.`);
  if (value.length > max) throw invalidValue(`${name} is longer than ${max} characters.`);
  const c = controlCharacterIn(value);
  if (c !== undefined || /[\n\r\t]/.test(value)) throw invalidValue(`${name} holds a control character, which is not accepted.`);
  return value;
}

/** SCIM booleans; Entra sends "True"/"False" strings, which are read as the booleans they name. */
export function booleanOf(value: unknown, name: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  throw invalidValue(`${name} must be true or false.`);
}

/**
 * The work entry of a multi-valued attribute: type "work", else the primary one, else the only
 * one. wsops keeps one: a body with two different work entries is refused, while in the result of
 * a PATCH the last one wins (an `add` appends the new address after the one stored).
 */
function workEntry(value: unknown, name: string, lastWins: boolean): string | null | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw invalidValue(`${name} must be an array.`);
  if (value.length > 20) throw invalidValue(`${name} holds more than 20 entries.`);
  const entries = value.map((e, i) => canonical(e, ENTRY_PARTS, `${name}[${i}]`, 'invalidSyntax'));
  for (const [i, e] of entries.entries()) text(e.type, `${name}[${i}].type`, 40);
  const pick = (test: (e: RecordObject) => boolean) => {
    const found = entries.filter(test);
    const values = new Set(found.map((e) => (typeof e.value === 'string' ? e.value.toLowerCase() : e.value)));
    if (values.size > 1 && !lastWins) {
      throw invalidValue(`${name} holds ${found.length} work entries with different values; wsops keeps one work entry per person.`);
    }
    return lastWins ? found.at(-1) : found[0];
  };
  const chosen =
    pick((e) => typeof e.type === 'string' && e.type.toLowerCase() === 'work') ??
    pick((e) => booleanOf(e.primary, `${name}.primary`) === true) ??
    (entries.length === 1 ? entries[0] : undefined);
  if (!chosen) return entries.length === 0 ? null : undefined;
  return text(chosen.value, `${name}.value`) ?? null;
}

/** A userName that is an email address stands for the work email when a User gives none. */
const ADDRESS = /^[^\s@]+@[^\s@]+$/;

function managerOf(value: unknown): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === null || value === '') return null;
  // Entra sends the manager's id as a bare string in a PATCH; the schema's form is {"value": id}.
  if (typeof value === 'string') return text(value, 'manager.value', 80);
  const m = canonical(value, MANAGER_PARTS, 'manager', 'invalidSyntax');
  return text(m.value, 'manager.value', 80) ?? null;
}

/**
 * The person a User body describes. What SCIM has no word for (team, location, dates) is kept
 * from the stored person, and so is an absent `active`. With `absentKeeps` (a PUT), every
 * attribute the body leaves out keeps its stored value too: an identity provider sends only the
 * attributes its mapping names, and a profile update must not wipe a manager or a phone number
 * the system of record wrote. An attribute sent as null is cleared.
 */
export function userToPerson(body: unknown, ctx: UserContext): UserWrite {
  const unknownAs = ctx.unknownAs ?? 'invalidSyntax';
  const user = canonical(body, [...KEPT, ...IGNORED], 'The User', unknownAs);
  const name = user.name === undefined || user.name === null ? {} : canonical(user.name, NAME_PARTS, 'name', unknownAs);
  const ext =
    user[ENTERPRISE_SCHEMA] === undefined || user[ENTERPRISE_SCHEMA] === null
      ? {}
      : canonical(user[ENTERPRISE_SCHEMA], ENTERPRISE_PARTS, 'The enterprise extension', unknownAs);
  const userName = text(user.userName, 'userName', 254);
  if (!userName) {
    throw invalidValue(
      "userName is required: the identity provider's unique name for the user (any text: a sign-in name, an employee login or an email address).",
    );
  }
  const current = ctx.current ?? {};
  const stored = ctx.absentKeeps ? current : {};
  const storedLink = ctx.absentKeeps ? ctx.currentLink : undefined;
  const email =
    workEntry(user.emails, 'emails', unknownAs === 'invalidPath') ??
    (user.emails === undefined ? (stored.work_email as string | undefined) : undefined) ??
    (ADDRESS.test(userName) ? userName : undefined);
  if (!email) {
    throw invalidValue(
      'emails: wsops keeps a work email for each person (the people register requires one); send emails with a work entry, or a userName that is an email address.',
    );
  }
  const given =
    text(name.givenName, 'name.givenName') ?? (name.givenName === undefined ? (stored.given_name as string | undefined) : undefined) ?? '';
  const family =
    text(name.familyName, 'name.familyName') ??
    (name.familyName === undefined ? (stored.family_name as string | undefined) : undefined) ??
    '';
  const display =
    text(user.displayName, 'displayName') ??
    text(name.formatted, 'name.formatted') ??
    (user.displayName === undefined ? (stored.display_name as string | undefined) : undefined) ??
    (`${given} ${family}`.trim() || userName);
  const phone = workEntry(user.phoneNumbers, 'phoneNumbers', unknownAs === 'invalidPath');
  const active = booleanOf(user.active, 'active');
  const manager = managerOf(ext.manager);
  if (manager && manager === current.id) throw invalidValue('manager: a User cannot be their own manager.');
  const title = text(user.title, 'title');
  const externalId = text(user.externalId, 'externalId', 255);
  const employeeNumber = text(ext.employeeNumber, 'employeeNumber', 255);
  const person: RecordObject = {
    display_name: display,
    given_name: given,
    family_name: family,
    work_email: email,
    work_phone: phone !== undefined ? phone : user.phoneNumbers === undefined ? (stored.work_phone ?? null) : null,
    job_title: title ?? (user.title === undefined ? (stored.job_title ?? '') : ''),
    team_id: current.team_id ?? null,
    location_id: current.location_id ?? ctx.locationId,
    manager_id: manager !== undefined ? manager : (stored.manager_id ?? null),
    status: active === undefined ? (current.status ?? 'ACTIVE') : active ? 'ACTIVE' : 'INACTIVE',
    start_date: current.start_date ?? ctx.today,
    end_date: current.end_date ?? null,
  };
  return {
    person,
    link: {
      external_id: externalId ?? (user.externalId === undefined ? (storedLink?.external_id ?? null) : null),
      employee_number: employeeNumber ?? (ext.employeeNumber === undefined ? (storedLink?.employee_number ?? null) : null),
      user_name: userName,
    },
  };
}

/** The SCIM User of a stored person. */
export function personToUser(person: RecordObject, link: ScimLink | undefined, baseUrl: string): RecordObject {
  const id = person.id as string;
  const enterprise: RecordObject = {};
  if (link?.employee_number) enterprise.employeeNumber = link.employee_number;
  if (person.manager_id) enterprise.manager = { value: person.manager_id, $ref: `${baseUrl}/scim/v2/Users/${person.manager_id}` };
  const hasEnterprise = Object.keys(enterprise).length > 0;
  return {
    schemas: hasEnterprise ? [USER_SCHEMA, ENTERPRISE_SCHEMA] : [USER_SCHEMA],
    id,
    ...(link?.external_id ? { externalId: link.external_id } : {}),
    userName: link?.user_name ?? person.work_email,
    name: {
      givenName: person.given_name,
      familyName: person.family_name,
      formatted: `${person.given_name} ${person.family_name}`.trim(),
    },
    displayName: person.display_name,
    title: person.job_title,
    emails: [{ value: person.work_email, type: 'work', primary: true }],
    ...(person.work_phone ? { phoneNumbers: [{ value: person.work_phone, type: 'work', primary: true }] } : {}),
    active: person.status === 'ACTIVE',
    ...(hasEnterprise ? { [ENTERPRISE_SCHEMA]: enterprise } : {}),
    meta: {
      resourceType: 'User',
      created: person.created_at,
      lastModified: person.updated_at,
      location: `${baseUrl}/scim/v2/Users/${id}`,
    },
  };
}

/** Register fields by JSON pointer, as SCIM names them: what a refused write names. */
export const ATTRIBUTE_OF_POINTER: Readonly<Record<string, string>> = {
  '/work_email': 'emails[type eq "work"].value',
  '/given_name': 'name.givenName',
  '/family_name': 'name.familyName',
  '/display_name': 'displayName',
  '/job_title': 'title',
  '/work_phone': 'phoneNumbers',
  '/manager_id': `${ENTERPRISE_SCHEMA}:manager.value`,
  '/status': 'active',
};
