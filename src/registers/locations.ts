import { defineRegister } from './define.js';
import { f } from './fields.js';

export const locations = defineRegister({
  path: 'locations',
  resource: 'Location',
  description: 'A site, department or team. Departments and teams sit under a parent location.',
  idPrefix: 'loc',
  scope: 'locations:read',
  module: 'locations',
  fields: {
    name: f.string(),
    kind: f
      .enum(['SITE', 'DEPARTMENT', 'TEAM'])
      .describe(
        "SITE: a place people work at. DEPARTMENT and TEAM: groups of people under a parent location; a person's `team_id` names a TEAM.",
      ),
    parent_id: f.id('loc').nullable_(),
    timezone: f.timezone().describe('IANA time zone name, for example `Europe/Berlin`.'),
    address: f.string().nullable_(),
  },
  filters: [],
  search: ['name'],
});
