import { assets, people, systems, tasks, transitions } from '../../registers/catalogue.js';
import { eventData } from '../../webhooks/events/event-types.js';
import type { RecordObject } from '../../writes/records.js';
import { assetsAssignedTo, dropFromOpenTransitions, returnedAsset } from './holdings.js';
import { refuse, req } from './run.js';
import type { ActionContext, DomainAction } from './types.js';

interface ChecklistItem {
  id: string;
  title: string;
  done: boolean;
  task_id: string | null;
}

interface Access {
  person_id: string;
  level: string;
  granted_at: string;
}

/** Every checklist item done, and its OPEN task DONE. */
async function finishChecklist(ctx: ActionContext, transition: RecordObject): Promise<ChecklistItem[]> {
  const items = (transition.checklist as ChecklistItem[] | null) ?? [];
  for (const item of items) {
    if (item.task_id === null) continue;
    const task = await ctx.find(tasks, item.task_id);
    if (task?.status === 'OPEN') await ctx.write(tasks, { ...task, status: 'DONE', completed_at: ctx.nowIso });
  }
  return items.map((item) => ({ ...item, done: true }));
}

/** The earlier of two YYYY-MM-DD dates. */
function earlier(a: string, b: string): string {
  return a.localeCompare(b) <= 0 ? a : b;
}

/**
 * Completes an IN_PROGRESS transition: COMPLETED, completed_at, checklist done and its tasks DONE.
 * An offboarding first returns every asset ASSIGNED to the person (custody closed, and no
 * `asset.returned`: the one `transition.completed` reports them in `returned_asset_ids`), removes
 * the person from every system's access (`removed_system_ids`), deactivates the person
 * (INACTIVE, end_date the effective date, or today if that is earlier) and empties
 * `held_asset_ids` / `held_system_ids`. Emits exactly one `transition.completed`.
 */
export const transitionComplete: DomainAction = {
  module: 'transitions',
  description:
    'complete an IN_PROGRESS transition; an offboarding returns assets, removes access, deactivates the person (emits transition.completed)',
  options: [{ name: 'transition', placeholder: '<id>', description: 'transition id (trn_...)', kind: 'id', prefix: 'trn', required: true }],
  target: (args) => req(args, 'transition'),
  async apply(ctx, args) {
    const id = req(args, 'transition');
    const transition = await ctx.load(transitions, id);
    if (transition.status !== 'IN_PROGRESS') {
      throw refuse(`transition ${id} is ${transition.status}; only an IN_PROGRESS transition can be completed`);
    }
    const checklist = await finishChecklist(ctx, transition);
    const completed: RecordObject = { ...transition, status: 'COMPLETED', completed_at: ctx.nowIso, checklist };
    if (transition.kind !== 'OFFBOARDING') {
      const done = await ctx.write(transitions, completed);
      await ctx.emit('transition.completed', eventData.transition('transition.completed', done));
      return;
    }

    const personId = transition.person_id as string;
    const person = await ctx.load(people, personId, 'person');
    const returned: string[] = [];
    for (const asset of await assetsAssignedTo(ctx, personId)) {
      await ctx.write(assets, returnedAsset(asset, ctx.nowIso));
      returned.push(asset.id as string);
    }
    const removed: string[] = [];
    const withAccess = await ctx.query(systems, { naming: personId }, (s) =>
      ((s.access as Access[] | null) ?? []).some((a) => a.person_id === personId),
    );
    for (const system of withAccess) {
      await ctx.write(systems, { ...system, access: (system.access as Access[]).filter((a) => a.person_id !== personId) });
      removed.push(system.id as string);
    }
    const today = ctx.nowIso.slice(0, 10);
    const effective = transition.effective_date as string;
    await ctx.write(people, { ...person, status: 'INACTIVE', end_date: earlier(effective, today) });
    await dropFromOpenTransitions(ctx, returned, id);
    const done = await ctx.write(transitions, { ...completed, held_asset_ids: [], held_system_ids: [] });
    await ctx.emit(
      'transition.completed',
      eventData.transition('transition.completed', done, {
        returned_asset_ids: [...returned].sort(),
        removed_system_ids: [...removed].sort(),
      }),
    );
  },
};
