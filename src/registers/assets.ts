import { defineRegister } from './define.js';
import { f } from './fields.js';

export const assets = defineRegister({
  path: 'assets',
  resource: 'Asset',
  description: 'A piece of equipment, its assignment, custody history and warranty.',
  idPrefix: 'ast',
  scope: 'assets:read',
  module: 'assets',
  fields: {
    asset_tag: f.string(),
    name: f.string(),
    category: f.enum(['LAPTOP', 'PHONE', 'MONITOR', 'VEHICLE', 'TOOL', 'FURNITURE', 'OTHER']),
    status: f.enum(['AVAILABLE', 'ASSIGNED', 'IN_MAINTENANCE', 'RETIRED', 'LOST']),
    location_id: f.id('loc').nullable_(),
    assigned_user_id: f.id('per').nullable_(),
    assigned_at: f.timestamp().nullable_(),
    expected_return_at: f.timestamp().nullable_(),
    serial_number: f.string().nullable_(),
    purchase_date: f.date().nullable_(),
    warranty_expires_on: f.date().nullable_(),
    custody: f.list({
      person_id: f.id('per'),
      from: f.timestamp(),
      to: f.timestamp().nullable_(),
    }),
  },
  filters: ['category', 'location_id', 'status'],
  search: ['asset_tag', 'name', 'serial_number'],
});
