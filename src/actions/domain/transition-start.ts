import { newId } from '../../ids.js';
import { people, tasks, transitions } from '../../registers/catalogue.js';
import { eventData } from '../../webhooks/events/event-types.js';
import { refuse, req } from './run.js';
import type { DomainAction } from './types.js';

interface ChecklistItem {
  id: string;
  title: string;
  done: boolean;
  task_id: string | null;
}

const DAY = 86_400_000;
const HOUR = 3_600_000;

/**
 * Submits a DRAFT transition: IN_PROGRESS, started_at; each open checklist item without a
 * task gets an OPEN task (source TRANSITION) for the person's manager, due before the
 * effective date, and is linked to it. Emits `transition.started`.
 */
export const transitionStart: DomainAction = {
  module: 'transitions',
  description: 'submit a DRAFT transition: its tasks go out (emits transition.started)',
  options: [{ name: 'transition', placeholder: '<id>', description: 'transition id (trn_...)', kind: 'id', prefix: 'trn', required: true }],
  target: (args) => req(args, 'transition'),
  async apply(ctx, args) {
    const id = req(args, 'transition');
    const transition = await ctx.load(transitions, id);
    if (transition.status !== 'DRAFT') throw refuse(`transition ${id} is ${transition.status}; only a DRAFT transition can be started`);
    const person = await ctx.find(people, transition.person_id as string);
    const manager = typeof person?.manager_id === 'string' ? await ctx.find(people, person.manager_id) : undefined;
    const assignee = manager?.status === 'ACTIVE' ? (manager.id as string) : null;
    const effective = Date.parse(`${transition.effective_date as string}T00:00:00.000Z`);
    const items = (transition.checklist as ChecklistItem[] | null) ?? [];
    const checklist: ChecklistItem[] = [];
    for (const [i, item] of items.entries()) {
      if (item.task_id !== null || item.done) {
        checklist.push(item);
        continue;
      }
      // Like the demo data: due at 09:00 UTC, one day apart, the last one the day before the effective date.
      const due = Number.isNaN(effective) ? null : new Date(effective + 9 * HOUR - (items.length - i) * DAY).toISOString();
      const task = await ctx.write(tasks, {
        id: newId('tsk'),
        title: person ? `${item.title}: ${person.display_name as string}` : item.title,
        source_type: 'TRANSITION',
        source_id: id,
        assignee_id: assignee,
        location_id: transition.location_id ?? null,
        status: 'OPEN',
        due_at: due,
        completed_at: null,
      });
      checklist.push({ ...item, task_id: task.id as string });
    }
    const started = await ctx.write(transitions, { ...transition, status: 'IN_PROGRESS', started_at: ctx.nowIso, checklist });
    await ctx.emit('transition.started', eventData.transition('transition.started', started));
  },
};
