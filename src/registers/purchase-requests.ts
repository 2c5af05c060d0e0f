import { defineRegister } from './define.js';
import { f } from './fields.js';

export const purchaseRequests = defineRegister({
  path: 'purchase-requests',
  resource: 'PurchaseRequest',
  description: 'A purchase request with its chain of approvers and the decisions taken.',
  idPrefix: 'prq',
  scope: 'approvals:read',
  module: 'approvals',
  fields: {
    title: f.string(),
    description: f.text().nullable_(),
    requester_id: f.id('per'),
    location_id: f.id('loc').nullable_(),
    vendor_id: f.id('ven').nullable_(),
    amount_minor: f.integer(0),
    currency: f.currency(),
    status: f.enum(['DRAFT', 'SUBMITTED', 'CHANGES_REQUESTED', 'APPROVED', 'REJECTED', 'WITHDRAWN']),
    approvers: f.list({
      person_id: f.id('per'),
      step: f.integer(1),
      decision: f.enum(['PENDING', 'APPROVED', 'REJECTED', 'PASSED']),
      decided_at: f.timestamp().nullable_(),
    }),
    current_approver_id: f.id('per').nullable_(),
    decided_at: f.timestamp().nullable_(),
  },
  filters: ['location_id'],
  search: ['title'],
});
