/**
 * Real domain events for a test: one available asset and one active person of a seeded workspace,
 * and `raise()`, which assigns the asset, then returns it, in turn (a second of the test clock
 * apart), through the domain actions, and gives the id of the event each emitted.
 */
import assert from 'node:assert/strict';
import { runAction } from '../../src/actions/domain/index.js';
import type { Harness } from './harness.js';

export async function assetEvents(h: Harness, ws: string): Promise<{ raise: () => Promise<string>; assetId: string }> {
  const docs = await h.services.database.db
    .selectFrom('records')
    .select('doc')
    .where('workspace_id', '=', ws)
    .where('register', 'in', ['assets', 'people'])
    .execute();
  const records = docs.map((d) => JSON.parse(d.doc) as { id: string; status: string });
  const asset = records.find((r) => r.id.startsWith('ast_') && r.status === 'AVAILABLE');
  const person = records.find((r) => r.id.startsWith('per_') && r.status === 'ACTIVE');
  assert.ok(asset && person, 'the demo data has an available asset and an active person');
  let assigned = false;
  const raise = async () => {
    h.clock.advance(1000);
    const result = assigned
      ? await runAction(h.services, 'asset.return', ws, { asset: asset.id })
      : await runAction(h.services, 'asset.assign', ws, { asset: asset.id, person: person.id });
    assigned = !assigned;
    return result.events[0] as string;
  };
  return { raise, assetId: asset.id };
}
