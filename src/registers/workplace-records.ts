import { defineRegister } from './define.js';
import { f } from './fields.js';

export const workplaceRecords = defineRegister({
  path: 'workplace-records',
  resource: 'WorkplaceRecord',
  description: 'An incident, inspection, visitor, facility request or desk booking, and the people it concerns.',
  idPrefix: 'wpr',
  scope: 'workplace:read',
  module: 'workplace',
  fields: {
    record_type: f.enum(['INCIDENT', 'INSPECTION', 'VISITOR', 'FACILITY_REQUEST', 'DESK_BOOKING']),
    status: f.enum(['OPEN', 'IN_PROGRESS', 'RESOLVED', 'CLOSED']),
    title: f.string(),
    description: f.text().nullable_(),
    location_id: f.id('loc').nullable_(),
    person_ids: f.ids('per'),
    reported_by_id: f.id('per').nullable_(),
    occurred_at: f.timestamp(),
  },
  filters: ['location_id', 'record_type', 'status'],
  search: ['title'],
});
