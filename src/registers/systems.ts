import { defineRegister } from './define.js';
import { f } from './fields.js';

export const systems = defineRegister({
  path: 'systems',
  resource: 'System',
  description: 'A business system, its owner, and who holds access to it.',
  idPrefix: 'sys',
  scope: 'systems:read',
  module: 'systems',
  fields: {
    name: f.string(),
    category: f.enum(['PRODUCTIVITY', 'ENGINEERING', 'FINANCE', 'HR', 'SALES', 'SECURITY', 'OTHER']),
    status: f.enum(['PLANNED', 'ACTIVE', 'RETIRED']),
    owner_id: f.id('per').nullable_(),
    vendor_id: f.id('ven').nullable_(),
    location_id: f.id('loc').nullable_(),
    access: f.list({
      person_id: f.id('per'),
      level: f.enum(['USER', 'ADMIN', 'OWNER']),
      granted_at: f.timestamp(),
    }),
  },
  filters: ['category', 'location_id', 'status'],
  search: ['name'],
});
