import { defineRegister } from './define.js';
import { f } from './fields.js';

export const handovers = defineRegister({
  path: 'handovers',
  resource: 'Handover',
  description: 'A holiday, shift or role handover with its items and recipient.',
  idPrefix: 'hnd',
  scope: 'handovers:read',
  module: 'handovers',
  fields: {
    kind: f.enum(['HOLIDAY', 'SHIFT', 'ROLE']),
    from_person_id: f.id('per'),
    recipient_id: f.id('per'),
    location_id: f.id('loc').nullable_(),
    status: f.enum(['DRAFT', 'SENT', 'ACKNOWLEDGED', 'CANCELLED']),
    starts_at: f.timestamp(),
    ends_at: f.timestamp().nullable_(),
    items: f.list({
      id: f.string(),
      title: f.string(),
      notes: f.text().nullable_(),
      task_id: f.id('tsk').nullable_(),
    }),
    acknowledged_at: f.timestamp().nullable_(),
  },
  filters: ['location_id', 'status'],
  search: [],
});
