/**
 * The domain actions: the write side of wsops. Each runs in one transaction that updates the
 * registers, records an audit entry and emits its event (transactional outbox). The CLI
 * (`wsops act`) and the internal API (`POST /internal/v1/actions/:action`) both call this table.
 */

import type { Clock } from '../../clock.js';
import { AppError } from '../../errors.js';
import type { Database } from '../../store/database.js';
import type { RecordStore } from '../../writes/records.js';
import { assetAssign } from './asset-assign.js';
import { assetReturn } from './asset-return.js';
import { handoverAcknowledge } from './handover-acknowledge.js';
import { learningAcknowledge } from './learning-acknowledge.js';
import { purchaseRequestDecide } from './purchase-request-decide.js';
import { runDomainAction } from './run.js';
import { transitionComplete } from './transition-complete.js';
import { transitionStart } from './transition-start.js';
import type { ActionEntry, ActionResult, DomainAction, RunOptions } from './types.js';

/** What this file takes of the services built at start (services.ts). */
export interface ActionsServices {
  database: Database;
  records: RecordStore;
  clock: Clock;
}

const DEFINITIONS: Readonly<Record<string, DomainAction>> = {
  'asset.assign': assetAssign,
  'asset.return': assetReturn,
  'purchase_request.decide': purchaseRequestDecide,
  'handover.acknowledge': handoverAcknowledge,
  'transition.start': transitionStart,
  'transition.complete': transitionComplete,
  'learning.acknowledge': learningAcknowledge,
};

export const ACTIONS: Readonly<Record<string, ActionEntry>> = Object.fromEntries(
  Object.entries(DEFINITIONS).map(([name, action]) => [
    name,
    {
      name,
      description: action.description,
      options: action.options,
      run: (services, workspaceId, args, options) => runDomainAction(services, name, action, workspaceId, args, options),
    } satisfies ActionEntry,
  ]),
);

export const ACTION_NAMES: readonly string[] = Object.keys(ACTIONS);

/** The action of that name, or a refusal that lists the actions. */
export function actionByName(name: string): ActionEntry {
  const action = Object.hasOwn(ACTIONS, name) ? ACTIONS[name] : undefined;
  if (!action) {
    const shown = name.length > 60 ? `${name.slice(0, 60)}…` : name;
    throw new AppError('not_found', `unknown action "${shown}"; actions are: ${ACTION_NAMES.join(', ')}`);
  }
  return action;
}

/** Runs the named action. */
export async function runAction(
  services: ActionsServices,
  name: string,
  workspaceId: string,
  args: Readonly<Record<string, unknown>>,
  options?: RunOptions,
): Promise<ActionResult> {
  return actionByName(name).run(services, workspaceId, args, options);
}

export type { ActionEntry, ActionResult, OptionSpec, RunOptions } from './types.js';
