import { defineRegister } from './define.js';
import { f } from './fields.js';

export const people = defineRegister({
  path: 'people',
  resource: 'Person',
  description: 'An employee directory entry: names, work contact details, role and team.',
  idPrefix: 'per',
  scope: 'people:read',
  module: 'people',
  fields: {
    display_name: f.string(),
    given_name: f.string(),
    family_name: f.string(),
    work_email: f.email(),
    work_phone: f.string().nullable_(),
    job_title: f.string(),
    team_id: f
      .id('loc')
      .nullable_()
      .describe(
        "The person's team, or null. Teams are locations: this is the id of a location of `kind` TEAM (under its department or site), read from /api/v1/locations. wsops checks that the location exists, not its kind.",
      ),
    location_id: f.id('loc'),
    manager_id: f.id('per').nullable_(),
    status: f.enum(['ACTIVE', 'INACTIVE']),
    start_date: f.date(),
    end_date: f.date().nullable_(),
  },
  filters: ['location_id'],
  search: ['display_name', 'work_email'],
});
