/**
 * The committed generated files (types by openapi-typescript, the register list) are exactly
 * what the served OpenAPI document generates: a change to the API without `npm run generate
 * -w @wsops/client` fails here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createHarness, type Harness } from '../../../test/helpers/harness.js';
import { GENERATED_DIR, generate } from '../scripts/generate.js';

describe('generated client declarations', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness('sqlite');
  });
  after(() => h.close());

  it('match the document the server serves (regenerate with: npm run generate -w @wsops/client)', async () => {
    const served = await h.app.inject({ method: 'GET', url: '/developers/openapi.json' });
    const files = await generate(JSON.parse(served.body));
    for (const [name, text] of Object.entries(files)) {
      assert.equal(
        readFileSync(join(GENERATED_DIR, name), 'utf8'),
        text,
        `src/generated/${name} has drifted from the served OpenAPI document`,
      );
    }
  });

  it('list the eleven registers with their scopes', async () => {
    const { REGISTERS } = await import('../src/generated/registers.js');
    assert.deepEqual(
      REGISTERS.map((r) => `${r.property}:${r.scope}`),
      [
        'assets:assets:read',
        'handovers:handovers:read',
        'learningAssignments:learning:read',
        'locations:locations:read',
        'people:people:read',
        'purchaseRequests:approvals:read',
        'systems:systems:read',
        'tasks:tasks:read',
        'transitions:transitions:read',
        'vendors:vendors:read',
        'workplaceRecords:workplace:read',
      ],
    );
  });
});
