import { defineRegister } from './define.js';
import { f } from './fields.js';

export const learningAssignments = defineRegister({
  path: 'learning-assignments',
  resource: 'LearningAssignment',
  description: 'A policy or course assigned to a person, with its acknowledgement evidence.',
  idPrefix: 'lrn',
  scope: 'learning:read',
  module: 'learning',
  fields: {
    content_id: f.id('cnt'),
    content_title: f.string(),
    content_kind: f.enum(['POLICY', 'COURSE']),
    person_id: f.id('per'),
    assigned_by_id: f.id('per').nullable_(),
    assigned_at: f.timestamp(),
    due_at: f.timestamp().nullable_(),
    status: f.enum(['ASSIGNED', 'IN_PROGRESS', 'COMPLETED']),
    completion_method: f.enum(['ACKNOWLEDGED', 'PASSED', 'RECORDED_ON_BEHALF']).nullable_(),
    completed_at: f.timestamp().nullable_(),
    recorded_by_id: f.id('per').nullable_(),
    score: f.integer(0).nullable_(),
  },
  filters: [],
  search: [],
});
