import { AppError } from '../../errors.js';
import { people, purchaseRequests } from '../../registers/catalogue.js';
import { eventData } from '../../webhooks/events/event-types.js';
import type { RecordObject } from '../../writes/records.js';
import { opt, refuse, req } from './run.js';
import type { DomainAction } from './types.js';

interface Step {
  person_id: string;
  step: number;
  decision: 'PENDING' | 'APPROVED' | 'REJECTED' | 'PASSED';
  decided_at: string | null;
}

export const DECISIONS = ['approve', 'reject', 'pass', 'send_back', 'withdraw'] as const;

/**
 * Acts on the current approver's step of a SUBMITTED request.
 * - approve: the step is APPROVED; the next PENDING approver becomes current, or at the last
 *   step the request is APPROVED (decided_at) and `purchase_request.decided` is emitted.
 * - pass: the step is PASSED and the next approver becomes current; refused at the last step.
 * - reject: the step and the request are REJECTED (decided_at); emits `purchase_request.decided`.
 * - send_back: the request is CHANGES_REQUESTED (back with the requester); no event.
 * - withdraw: the requester withdraws it: WITHDRAWN; no event.
 * With `--approver`, the decision is taken by that person: the current approver (or, for
 * withdraw, the requester); anyone else is refused.
 */
export const purchaseRequestDecide: DomainAction = {
  module: 'approvals',
  description: 'decide the current step of a SUBMITTED purchase request (approve/reject emit purchase_request.decided)',
  options: [
    { name: 'request', placeholder: '<id>', description: 'purchase request id (prq_...)', kind: 'id', prefix: 'prq', required: true },
    { name: 'decision', placeholder: '<decision>', description: DECISIONS.join('|'), kind: 'choice', choices: DECISIONS, required: true },
    {
      name: 'approver',
      placeholder: '<id>',
      description: 'who decides (per_...): must be the current approver',
      kind: 'id',
      prefix: 'per',
    },
  ],
  target: (args) => req(args, 'request'),
  async apply(ctx, args) {
    const id = req(args, 'request');
    const decision = req(args, 'decision') as (typeof DECISIONS)[number];
    const approver = opt(args, 'approver');
    const request = await ctx.load(purchaseRequests, id, 'purchase request');
    if (request.status !== 'SUBMITTED') {
      throw refuse(`purchase request ${id} is ${request.status}; only a SUBMITTED request can be decided`);
    }
    if (approver !== undefined && !(await ctx.find(people, approver))) {
      throw new AppError('not_found', `no person ${approver} in workspace ${ctx.workspaceId}`);
    }
    const closed = (status: string): RecordObject => ({ ...request, status, current_approver_id: null });

    if (decision === 'withdraw') {
      if (approver !== undefined && approver !== request.requester_id) {
        throw refuse(
          `${approver} is not the requester of purchase request ${id}; only its requester (${request.requester_id}) withdraws it`,
        );
      }
      await ctx.write(purchaseRequests, closed('WITHDRAWN'));
      return;
    }

    const steps = [...((request.approvers as Step[] | null) ?? [])].sort((a, b) => a.step - b.step);
    const current = request.current_approver_id;
    const index = steps.findIndex((s) => s.person_id === current && s.decision === 'PENDING');
    const step = steps[index];
    if (typeof current !== 'string' || !step) throw refuse(`purchase request ${id} has no pending approver step to decide`);
    if (approver !== undefined && approver !== current) {
      throw refuse(`${approver} is not the current approver of purchase request ${id}; the current approver is ${current}`);
    }
    if (decision === 'send_back') {
      await ctx.write(purchaseRequests, closed('CHANGES_REQUESTED'));
      return;
    }
    const next = steps.slice(index + 1).find((s) => s.decision === 'PENDING');
    if (decision === 'pass' && !next) throw refuse(`purchase request ${id} is at its last approver step, which cannot be passed`);
    const decided: Step = {
      ...step,
      decision: decision === 'approve' ? 'APPROVED' : decision === 'reject' ? 'REJECTED' : 'PASSED',
      decided_at: ctx.nowIso,
    };
    const approvers = steps.map((s) => (s === step ? decided : s));
    if (decision === 'reject' || (decision === 'approve' && !next)) {
      const final = await ctx.write(purchaseRequests, {
        ...closed(decision === 'reject' ? 'REJECTED' : 'APPROVED'),
        approvers,
        decided_at: ctx.nowIso,
      });
      await ctx.emit('purchase_request.decided', eventData.purchaseRequestDecided(final));
      return;
    }
    await ctx.write(purchaseRequests, { ...request, approvers, current_approver_id: next?.person_id ?? null });
  },
};
