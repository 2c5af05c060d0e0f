/**
 * The catalogue of registers. Routes, query validation, the OpenAPI document, the seed, the
 * CLI's REGISTER names and the generated cross-cutting tests all iterate over this list:
 * adding a register is one new file plus one line here.
 */
import { assets } from './assets.js';
import type { Register } from './define.js';
import { handovers } from './handovers.js';
import { learningAssignments } from './learning-assignments.js';
import { locations } from './locations.js';
import { people } from './people.js';
import { purchaseRequests } from './purchase-requests.js';
import { systems } from './systems.js';
import { tasks } from './tasks.js';
import { transitions } from './transitions.js';
import { vendors } from './vendors.js';
import { workplaceRecords } from './workplace-records.js';

export const REGISTERS: readonly Register[] = [
  assets,
  handovers,
  learningAssignments,
  locations,
  people,
  purchaseRequests,
  systems,
  tasks,
  transitions,
  vendors,
  workplaceRecords,
];

const byPath = new Map(REGISTERS.map((r) => [r.path, r]));
const byPrefix = new Map(REGISTERS.map((r) => [r.idPrefix, r]));

export function registerByPath(path: string): Register | undefined {
  return byPath.get(path);
}

/** The register whose ids carry this prefix (`per` -> people). */
export function registerByPrefix(prefix: string): Register | undefined {
  return byPrefix.get(prefix);
}

export function registerById(id: string): Register | undefined {
  return byPrefix.get(id.split('_')[0] ?? '');
}

export * from './define.js';
export {
  assets,
  handovers,
  learningAssignments,
  locations,
  people,
  purchaseRequests,
  systems,
  tasks,
  transitions,
  vendors,
  workplaceRecords,
};
