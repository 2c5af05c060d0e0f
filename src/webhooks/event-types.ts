/**
 * The catalogue of event types: the scope an endpoint must hold to receive each, and how its
 * `data` is cut from records (only fields the matching /api/v1 resource returns; people as ids).
 */
import type { ReadScope } from '../registers/define.js';

export const EVENT_TYPES = {
  'asset.assigned': { scope: 'assets:read', description: 'An asset is checked out to a person.' },
  'asset.returned': { scope: 'assets:read', description: 'A checked-out asset is returned in the assets register.' },
  'vendor.renewal_approaching': {
    scope: 'vendors:read',
    description: "A vendor's cancellation deadline first comes within 30 days (once per renewal date).",
  },
  'purchase_request.decided': { scope: 'approvals:read', description: 'A purchase request is finally approved or rejected.' },
  'handover.acknowledged': { scope: 'handovers:read', description: 'The recipient acknowledges a handover.' },
  'transition.started': { scope: 'transitions:read', description: 'A transition is submitted out of draft and its tasks go out.' },
  'transition.completed': { scope: 'transitions:read', description: 'A transition is marked complete.' },
  'learning.acknowledged': { scope: 'learning:read', description: 'A learning assignment is completed.' },
} as const satisfies Record<string, { scope: ReadScope; description: string }>;

export type EventType = keyof typeof EVENT_TYPES;
export const VERIFICATION_EVENT = 'endpoint.verification';
/** Sent on demand from the console or CLI; outside the eight event types, never counted toward auto-disable. */
export const TEST_EVENT = 'endpoint.test';
export const SUBSCRIBABLE_EVENTS = Object.keys(EVENT_TYPES) as EventType[];

export function isEventType(name: string): name is EventType {
  return Object.hasOwn(EVENT_TYPES, name);
}

type Rec = Readonly<Record<string, unknown>>;

/** Copies the named fields of a record: the event carries nothing the API would not return. */
export function pick(record: Rec, fields: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(fields.map((f) => [f, record[f] ?? null]));
}

export const eventData = {
  assetAssigned: (asset: Rec) => ({
    asset: pick(asset, ['id', 'asset_tag', 'status']),
    assigned_user_id: asset.assigned_user_id,
    expected_return_at: asset.expected_return_at ?? null,
  }),
  assetReturned: (asset: Rec, returnedFrom: string, returnedAt: string) => ({
    asset: pick(asset, ['id', 'asset_tag', 'status']),
    returned_from_user_id: returnedFrom,
    returned_at: returnedAt,
  }),
  vendorRenewal: (vendor: Rec) => ({
    vendor: pick(vendor, ['id', 'name', 'renewal_date', 'notice_period_days', 'cancellation_deadline', 'auto_renews']),
  }),
  purchaseRequestDecided: (pr: Rec) => ({
    purchase_request: pick(pr, ['id', 'title', 'status', 'amount_minor', 'currency', 'requester_id', 'decided_at']),
  }),
  handoverAcknowledged: (h: Rec) => ({
    handover: pick(h, ['id', 'kind', 'from_person_id', 'recipient_id', 'acknowledged_at']),
  }),
  transition: (t: Rec, extra: Record<string, unknown> = {}) => ({
    transition: pick(t, ['id', 'kind', 'person_id', 'status', 'started_at', 'completed_at']),
    ...extra,
  }),
  learningAcknowledged: (a: Rec) => ({
    learning_assignment: pick(a, ['id', 'person_id', 'content_id', 'content_title', 'completion_method', 'completed_at', 'recorded_by_id']),
  }),
};
