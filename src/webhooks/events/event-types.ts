/**
 * The catalogue of event types: the scope an endpoint must hold to receive each, when it is
 * sent, and the shape of its `data`, declared once. The shape is cut from the register
 * declarations (only fields the matching /api/v1 resource returns; people as ids), so the
 * builders below, the OpenAPI `webhooks` section and the SDK's types all come from it.
 */
import {
  assets,
  handovers,
  learningAssignments,
  purchaseRequests,
  type ReadScope,
  type Register,
  transitions,
  vendors,
} from '../../registers/catalogue.js';
import { f, type JsonSchema } from '../../registers/fields.js';

/** One member of an event's `data`. */
export type DataPart =
  /** A subset of a register's record: these fields exactly, as the API returns them. */
  | { kind: 'record'; register: Register; fields: readonly string[]; description: string }
  /** One field of a register's record. */
  | { kind: 'field'; register: Register; field: string; description: string }
  /** A value of the event's own (not a register field). */
  | { kind: 'own'; schema: JsonSchema; description: string };

export interface EventDeclaration {
  /** When the event is sent. */
  description: string;
  data: Readonly<Record<string, DataPart>>;
  /** Members of `data` present only in some events of this type. */
  optional?: readonly string[];
}

const record = (register: Register, fields: readonly string[], description: string): DataPart => {
  for (const name of fields) if (!(name in register.allFields)) throw new Error(`${register.path} has no field ${name}`);
  return { kind: 'record', register, fields, description };
};
const field = (register: Register, name: string, description: string): DataPart => {
  if (!(name in register.allFields)) throw new Error(`${register.path} has no field ${name}`);
  return { kind: 'field', register, field: name, description };
};
const own = (schema: JsonSchema, description: string): DataPart => ({ kind: 'own', schema, description });

const ASSET_REF = ['id', 'asset_tag', 'status'] as const;
const TRANSITION_FIELDS = ['id', 'kind', 'person_id', 'status', 'started_at', 'completed_at'] as const;

export const EVENT_TYPES = {
  'asset.assigned': {
    scope: 'assets:read',
    description: 'An asset is checked out to a person.',
    data: {
      asset: record(assets, ASSET_REF, 'The asset, as it is after the assignment.'),
      assigned_user_id: field(assets, 'assigned_user_id', 'The person the asset is assigned to.'),
      expected_return_at: field(assets, 'expected_return_at', 'When the asset is expected back, or null.'),
    },
  },
  'asset.returned': {
    scope: 'assets:read',
    description:
      'A checked-out asset is returned in the assets register. Assets returned by completing an offboarding are reported by `transition.completed` instead.',
    data: {
      asset: record(assets, ASSET_REF, 'The asset, as it is after the return.'),
      returned_from_user_id: own(f.id('per').schema(), 'The person who had the asset.'),
      returned_at: own(f.timestamp().schema(), 'When it was returned.'),
    },
  },
  'vendor.renewal_approaching': {
    scope: 'vendors:read',
    description:
      "Once per renewal date, when the vendor's cancellation deadline (renewal date minus its notice period) first comes within 30 days. The check runs every fifteen minutes.",
    data: {
      vendor: record(
        vendors,
        ['id', 'name', 'renewal_date', 'notice_period_days', 'cancellation_deadline', 'auto_renews'],
        'The vendor and its renewal terms.',
      ),
    },
  },
  'purchase_request.decided': {
    scope: 'approvals:read',
    description:
      'A purchase request is finally approved or rejected. Not sent when it is sent back for changes, withdrawn, or passed from one approver to the next.',
    data: {
      purchase_request: record(
        purchaseRequests,
        ['id', 'title', 'status', 'amount_minor', 'currency', 'requester_id', 'decided_at'],
        'The request with its final status (APPROVED or REJECTED).',
      ),
    },
  },
  'handover.acknowledged': {
    scope: 'handovers:read',
    description: 'The recipient of a holiday, shift or role handover acknowledges it.',
    data: {
      handover: record(handovers, ['id', 'kind', 'from_person_id', 'recipient_id', 'acknowledged_at'], 'The acknowledged handover.'),
    },
  },
  'transition.started': {
    scope: 'transitions:read',
    description: 'An onboarding or offboarding is submitted out of draft and its tasks go out.',
    data: { transition: record(transitions, TRANSITION_FIELDS, 'The transition, now IN_PROGRESS.') },
  },
  'transition.completed': {
    scope: 'transitions:read',
    description:
      'A transition is marked complete. For an offboarding, this is after its assets are returned, access removed and the account deactivated (no `asset.returned` is sent for those assets). Acknowledging a transition sends nothing.',
    data: {
      transition: record(transitions, TRANSITION_FIELDS, 'The transition, now COMPLETED.'),
      returned_asset_ids: own(f.ids('ast').schema(), 'Offboarding only: the assets returned by completing it.'),
      removed_system_ids: own(f.ids('sys').schema(), 'Offboarding only: the systems whose access was removed.'),
    },
    optional: ['returned_asset_ids', 'removed_system_ids'],
  },
  'learning.acknowledged': {
    scope: 'learning:read',
    description: 'An assignment is completed: a policy acknowledged, a course passed, or a completion recorded on somebody’s behalf.',
    data: {
      learning_assignment: record(
        learningAssignments,
        ['id', 'person_id', 'content_id', 'content_title', 'completion_method', 'completed_at', 'recorded_by_id'],
        'The completed assignment.',
      ),
    },
  },
} as const satisfies Record<string, EventDeclaration & { scope: ReadScope }>;

export type EventType = keyof typeof EVENT_TYPES;
export const VERIFICATION_EVENT = 'endpoint.verification';
/** Sent on demand from the console or CLI; outside the eight event types, never counted toward auto-disable. */
export const TEST_EVENT = 'endpoint.test';
export const SUBSCRIBABLE_EVENTS = Object.keys(EVENT_TYPES) as EventType[];

const ENDPOINT_ID = own({ type: 'string', pattern: '^we_[A-Za-z0-9]{1,40}$' }, 'The endpoint this event was sent to.');

/** Events every endpoint receives without subscribing; they need no scope. */
export const ENDPOINT_EVENTS = {
  [VERIFICATION_EVENT]: {
    description:
      'Once after an endpoint is registered (and again when it is re-verified or switched on), as a signed challenge. Any 2xx answer activates the endpoint; until then it receives no other event.',
    data: { endpoint_id: ENDPOINT_ID, challenge: own({ type: 'string', minLength: 1 }, 'Random text; nothing needs to be echoed.') },
  },
  [TEST_EVENT]: {
    description: 'Sent on demand from the console (or `wsops endpoint test`) to check a receiver. Never counted toward auto-disable.',
    data: { endpoint_id: ENDPOINT_ID, message: own({ type: 'string' }, 'A human-readable note that this is a test.') },
  },
} as const satisfies Record<string, EventDeclaration>;

/** Every event a receiver can get, subscribable or not: the OpenAPI `webhooks` section lists them all. */
export const ALL_EVENTS: Readonly<Record<string, EventDeclaration & { scope?: ReadScope }>> = { ...EVENT_TYPES, ...ENDPOINT_EVENTS };

export function isEventType(name: string): name is EventType {
  return Object.hasOwn(EVENT_TYPES, name);
}

type Rec = Readonly<Record<string, unknown>>;

/** Copies the named fields of a record: the event carries nothing the API would not return. */
export function pick(source: Rec, fields: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(fields.map((name) => [name, source[name] ?? null]));
}

/**
 * Builds an event's `data` from its declaration: record parts are cut to their declared
 * fields, other parts are taken as given; a member the declaration does not name is a bug.
 */
export function buildData(type: string, values: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const declaration = ALL_EVENTS[type];
  if (!declaration) throw new Error(`no event type ${type}`);
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values)) {
    const part = declaration.data[name];
    if (!part) throw new Error(`event ${type} declares no data member ${name}`);
    out[name] = part.kind === 'record' ? pick(value as Rec, part.fields) : (value ?? null);
  }
  return out;
}

export const eventData = {
  assetAssigned: (asset: Rec) =>
    buildData('asset.assigned', {
      asset,
      assigned_user_id: asset.assigned_user_id,
      expected_return_at: asset.expected_return_at,
    }),
  assetReturned: (asset: Rec, returnedFrom: string, returnedAt: string) =>
    buildData('asset.returned', { asset, returned_from_user_id: returnedFrom, returned_at: returnedAt }),
  vendorRenewal: (vendor: Rec) => buildData('vendor.renewal_approaching', { vendor }),
  purchaseRequestDecided: (pr: Rec) => buildData('purchase_request.decided', { purchase_request: pr }),
  handoverAcknowledged: (h: Rec) => buildData('handover.acknowledged', { handover: h }),
  transition: (type: 'transition.started' | 'transition.completed', t: Rec, extra: Record<string, unknown> = {}) =>
    buildData(type, { transition: t, ...extra }),
  learningAcknowledged: (a: Rec) => buildData('learning.acknowledged', { learning_assignment: a }),
  verification: (endpointId: string, challenge: string) => buildData(VERIFICATION_EVENT, { endpoint_id: endpointId, challenge }),
  test: (endpointId: string) =>
    buildData(TEST_EVENT, { endpoint_id: endpointId, message: 'This is a test event sent from wsops to check your receiver.' }),
};
