import { transitions } from '../../registers/catalogue.js';
import { CHECKLISTS, type TransitionKind } from '../catalog.js';
import type { SeedContext } from '../context.js';
import { between, DAY, HOUR, iso, isoDate, recentStamps, recordStamps, type Stamps, startOfDay } from '../time.js';
import { type TaskStatus, writeTask } from './tasks.js';

export type TransitionStatus = 'DRAFT' | 'IN_PROGRESS' | 'COMPLETED' | 'CANCELLED';

/**
 * A transition decided before people are generated: its subject's status, start and end dates
 * depend on it, and the asset and system generators must know whom to give something to.
 */
export interface TransitionPlan {
  kind: TransitionKind;
  status: TransitionStatus;
  /** Midnight UTC of the effective date. */
  effective: number;
  stamps: Stamps;
  /** Whether the subject is still active (and so may hold assets and access). */
  subjectActive: boolean;
  /** Assets and accesses the subject must hold, so the transition lists something. */
  wantAssets: number;
  wantSystems: number;
  personId: string;
}

/**
 * The first plans cover every kind and status, starting with the demo's offboarding in progress
 * whose subject holds two assets and two accesses.
 */
const FIRST: readonly [TransitionKind, TransitionStatus][] = [
  ['OFFBOARDING', 'IN_PROGRESS'],
  ['ONBOARDING', 'DRAFT'],
  ['OFFBOARDING', 'COMPLETED'],
  ['ONBOARDING', 'IN_PROGRESS'],
  ['OFFBOARDING', 'DRAFT'],
  ['ONBOARDING', 'COMPLETED'],
  ['OFFBOARDING', 'CANCELLED'],
  ['ONBOARDING', 'CANCELLED'],
];
const STATUSES: readonly TransitionStatus[] = ['DRAFT', 'IN_PROGRESS', 'COMPLETED', 'CANCELLED'];
const STATUS_WEIGHTS = [20, 25, 45, 10];
const KINDS: readonly TransitionKind[] = ['ONBOARDING', 'OFFBOARDING'];

/** `personIdAt(k)` gives the subject of plan `k` (the people generator reserves them). */
export function planTransitions(ctx: SeedContext, count: number, personIdAt: (k: number) => string): TransitionPlan[] {
  const rng = ctx.stream('transition-plans');
  const plans: TransitionPlan[] = [];
  for (let k = 0; k < count; k++) {
    const first = FIRST[k];
    const kind = first ? first[0] : rng.pick(KINDS);
    const status = first ? first[1] : rng.weighted(STATUSES, STATUS_WEIGHTS);
    const open = status === 'DRAFT' || status === 'IN_PROGRESS';
    // An open transition is about to take effect, so it was prepared in the last weeks (the
    // few such records barely move the spread of updated_at over the year).
    const stamps = open ? recentStamps(rng, ctx.now, 30 * DAY) : recordStamps(rng, ctx.now, 60 * DAY);
    const today = startOfDay(ctx.now);
    let effective: number;
    // A subject is INACTIVE exactly when their end date has passed: open offboardings end in
    // the future, a cancelled onboarding (the joiner never started) lies in the past.
    if (status === 'DRAFT') effective = today + rng.int(7, 45) * DAY;
    else if (status === 'IN_PROGRESS') effective = today + rng.int(1, 21) * DAY;
    else if (status === 'COMPLETED') effective = startOfDay(stamps.updated) - rng.int(0, 5) * DAY;
    else effective = today + (kind === 'ONBOARDING' ? -rng.int(1, 45) : rng.int(-30, 30)) * DAY;
    // A completed offboarding deactivated its person; a cancelled onboarding never started.
    const subjectActive = !(status === 'COMPLETED' && kind === 'OFFBOARDING') && !(status === 'CANCELLED' && kind === 'ONBOARDING');
    const want = k === 0 ? 2 : subjectActive && (open || kind === 'ONBOARDING') ? 1 : 0;
    plans.push({ kind, status, effective, stamps, subjectActive, wantAssets: want, wantSystems: want, personId: personIdAt(k) });
  }
  return plans;
}

export function transitionTaskCount(plans: readonly TransitionPlan[]): number {
  return plans.reduce((n, p) => n + CHECKLISTS[p.kind].length, 0);
}

/** Written after assets and systems, so `held_*_ids` list exactly what each subject holds. */
export async function seedTransitions(ctx: SeedContext, plans: readonly TransitionPlan[]): Promise<void> {
  const rng = ctx.stream('transitions');
  for (let k = 0; k < plans.length; k++) {
    const plan = plans[k] as TransitionPlan;
    const person = ctx.dir.person(plan.personId);
    if (!person) throw new Error(`transition subject ${plan.personId} was not generated`);
    const id = ctx.keys.id('trn', k);
    const { created, updated } = plan.stamps;
    const started =
      plan.status === 'IN_PROGRESS' || plan.status === 'COMPLETED' || (plan.status === 'CANCELLED' && rng.chance(0.5))
        ? between(rng, created, updated)
        : null;
    const items = CHECKLISTS[plan.kind];
    const done =
      plan.status === 'COMPLETED'
        ? items.length
        : plan.status === 'IN_PROGRESS'
          ? rng.int(1, plan.kind === 'OFFBOARDING' ? 3 : items.length - 1)
          : plan.status === 'CANCELLED' && started !== null
            ? rng.int(0, 2)
            : 0;
    const manager = person.managerId ? ctx.dir.person(person.managerId) : undefined;
    const checklist = items.map((title, i) => {
      const isDone = i < done;
      const status: TaskStatus = isDone ? 'DONE' : plan.status === 'CANCELLED' ? 'CANCELLED' : 'OPEN';
      const assignee = manager?.active && rng.chance(0.5) ? manager : ctx.dir.pickActive(rng, person.siteId);
      const taskId = writeTask(ctx, rng, {
        title: `${title}: ${person.displayName}`,
        sourceType: 'TRANSITION',
        sourceId: id,
        assigneeId: assignee.id,
        locationId: person.siteId,
        status,
        dueAt: plan.effective + 9 * HOUR - (items.length - i) * DAY,
        sourceCreated: created,
      });
      return { id: `chk_${rng.base62(12)}`, title, done: isDone, task_id: taskId };
    });
    const held = plan.subjectActive ? ctx.dir.holdings(person.id) : { assets: [], systems: [] };
    ctx.writer.add(transitions, {
      id,
      kind: plan.kind,
      person_id: person.id,
      location_id: person.siteId,
      status: plan.status,
      effective_date: isoDate(plan.effective),
      started_at: started === null ? null : iso(started),
      completed_at: plan.status === 'COMPLETED' ? iso(updated) : null,
      checklist,
      held_asset_ids: held.assets,
      held_system_ids: held.systems,
      created_at: iso(created),
      updated_at: iso(updated),
    });
    await ctx.writer.flushIfFull();
  }
}
