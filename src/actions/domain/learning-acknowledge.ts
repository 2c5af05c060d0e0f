import { AppError } from '../../errors.js';
import { learningAssignments, people, tasks } from '../../registers/catalogue.js';
import { eventData } from '../../webhooks/events/event-types.js';
import { opt, refuse, req } from './run.js';
import type { DomainAction } from './types.js';

export const METHODS = ['acknowledged', 'passed', 'recorded_on_behalf'] as const;

/**
 * Completes an ASSIGNED or IN_PROGRESS learning assignment: COMPLETED, completed_at and the
 * evidence. The method defaults to `acknowledged` for a POLICY and `passed` for a COURSE; a
 * policy is acknowledged (not passed), a course is passed (not acknowledged), and either may be
 * recorded on the person's behalf by someone who exists (`recorded_by`). `score` (0 to 100) goes
 * with `passed` only. The assignment's open task is closed. Emits `learning.acknowledged`.
 */
export const learningAcknowledge: DomainAction = {
  module: 'learning',
  description: 'complete a learning assignment: acknowledged, passed, or recorded on behalf (emits learning.acknowledged)',
  options: [
    { name: 'assignment', placeholder: '<id>', description: 'learning assignment id (lrn_...)', kind: 'id', prefix: 'lrn', required: true },
    { name: 'method', placeholder: '<method>', description: METHODS.join('|'), kind: 'choice', choices: METHODS },
    {
      name: 'recorded_by',
      placeholder: '<id>',
      description: 'who records it (per_...), with recorded_on_behalf',
      kind: 'id',
      prefix: 'per',
    },
    { name: 'score', placeholder: '<n>', description: 'score from 0 to 100, with passed', kind: 'integer', min: 0, max: 100 },
  ],
  target: (args) => req(args, 'assignment'),
  async apply(ctx, args) {
    const id = req(args, 'assignment');
    const assignment = await ctx.load(learningAssignments, id, 'learning assignment');
    if (assignment.status !== 'ASSIGNED' && assignment.status !== 'IN_PROGRESS') {
      throw refuse(`learning assignment ${id} is ${assignment.status}; only an ASSIGNED or IN_PROGRESS assignment can be completed`);
    }
    const kind = assignment.content_kind as string;
    const method = (opt(args, 'method') ?? (kind === 'COURSE' ? 'passed' : 'acknowledged')).toUpperCase();
    const bad = (param: string, message: string) => new AppError('invalid_parameter', message, { param });
    if (method === 'ACKNOWLEDGED' && kind !== 'POLICY') throw bad('method', `a ${kind} is passed, not acknowledged`);
    if (method === 'PASSED' && kind !== 'COURSE') throw bad('method', `a ${kind} is acknowledged, not passed`);
    const recordedBy = opt(args, 'recorded_by') ?? null;
    if (method === 'RECORDED_ON_BEHALF') {
      if (recordedBy === null) throw bad('recorded_by', 'recorded_on_behalf needs recorded_by: the person who records the completion');
      if (!(await ctx.find(people, recordedBy))) throw new AppError('not_found', `no person ${recordedBy} in workspace ${ctx.workspaceId}`);
    } else if (recordedBy !== null) {
      throw bad('recorded_by', 'recorded_by goes with the recorded_on_behalf method only');
    }
    const score = typeof args.score === 'number' ? args.score : null;
    if (score !== null && method !== 'PASSED') throw bad('score', 'score goes with the passed method only');
    const completed = await ctx.write(learningAssignments, {
      ...assignment,
      status: 'COMPLETED',
      completion_method: method,
      completed_at: ctx.nowIso,
      recorded_by_id: recordedBy,
      score,
    });
    const open = await ctx.query(
      tasks,
      { mention: id },
      (t) => t.source_type === 'LEARNING_ASSIGNMENT' && t.source_id === id && t.status === 'OPEN',
    );
    for (const task of open) await ctx.write(tasks, { ...task, status: 'DONE', completed_at: ctx.nowIso });
    await ctx.emit('learning.acknowledged', eventData.learningAcknowledged(completed));
  },
};
