import { defineRegister } from './define.js';
import { f } from './fields.js';

export const transitions = defineRegister({
  path: 'transitions',
  resource: 'Transition',
  description: 'A joiner (onboarding) or leaver (offboarding) checklist, and what the person still holds.',
  idPrefix: 'trn',
  scope: 'transitions:read',
  module: 'transitions',
  fields: {
    kind: f.enum(['ONBOARDING', 'OFFBOARDING']),
    person_id: f.id('per'),
    location_id: f.id('loc').nullable_(),
    status: f.enum(['DRAFT', 'IN_PROGRESS', 'COMPLETED', 'CANCELLED']),
    effective_date: f.date(),
    started_at: f.timestamp().nullable_(),
    completed_at: f.timestamp().nullable_(),
    checklist: f.list({
      id: f.string(),
      title: f.string(),
      done: f.boolean(),
      task_id: f.id('tsk').nullable_(),
    }),
    held_asset_ids: f.ids('ast'),
    held_system_ids: f.ids('sys'),
  },
  filters: ['location_id', 'status'],
  search: [],
});
