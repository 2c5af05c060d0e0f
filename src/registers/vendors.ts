import { defineRegister } from './define.js';
import { f } from './fields.js';

export const vendors = defineRegister({
  path: 'vendors',
  resource: 'Vendor',
  description: 'A subscription or contract with its owner, spend, seats and renewal terms.',
  idPrefix: 'ven',
  scope: 'vendors:read',
  module: 'vendors',
  fields: {
    name: f.string(),
    category: f.enum(['SOFTWARE', 'HARDWARE', 'SERVICES', 'FACILITIES', 'OTHER']),
    status: f.enum(['TRIAL', 'ACTIVE', 'CANCELLED', 'EXPIRED']),
    owner_id: f.id('per').nullable_(),
    location_id: f.id('loc').nullable_(),
    annual_cost_minor: f.integer(0).describe('Annual cost in minor units of `currency`.'),
    currency: f.currency(),
    seats_purchased: f.integer(0).nullable_(),
    seats_assigned: f.integer(0).nullable_(),
    contract_start_date: f.date(),
    renewal_date: f.date().nullable_(),
    notice_period_days: f.integer(0),
    cancellation_deadline: f.date().nullable_().describe('Derived: `renewal_date` minus `notice_period_days`.'),
    auto_renews: f.boolean(),
  },
  filters: ['category', 'location_id', 'status'],
  search: ['name'],
  derived: {
    cancellation_deadline: (v) => cancellationDeadline(v.renewal_date as string | null, v.notice_period_days as number),
  },
});

/** The last day to cancel before a renewal: renewal date minus the notice period. */
export function cancellationDeadline(renewalDate: string | null, noticeDays: number): string | null {
  if (!renewalDate || !/^\d{4}-\d{2}-\d{2}$/.test(renewalDate) || !Number.isInteger(noticeDays)) return null;
  const ms = Date.parse(`${renewalDate}T00:00:00Z`) - noticeDays * 86_400_000;
  return new Date(ms).toISOString().slice(0, 10);
}
