/** The docs' path check (`npm run lint`): a src/ or test/ path named in the README or docs/ that does not exist fails it. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

const SCRIPT = new URL('../../scripts/check-doc-paths.mjs', import.meta.url).pathname;
const check = (root?: string) => spawnSync(process.execPath, root ? [SCRIPT, root] : [SCRIPT], { encoding: 'utf8' });

describe('docs path check', () => {
  let root: string;
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'wsops-doc-paths-'));
    for (const file of ['src/webhooks/claim.ts', 'src/webhooks/lease.ts', 'src/config.ts', 'test/api/keys.test.ts', 'scripts/build.mjs']) {
      mkdirSync(join(root, file, '..'), { recursive: true });
      writeFileSync(join(root, file), '');
    }
    mkdirSync(join(root, 'docs/adr'), { recursive: true });
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('passes on this repository', () => {
    const run = check();
    assert.equal(run.status, 0, run.stderr);
  });

  it('passes on paths that exist, however they are written', () => {
    writeFileSync(
      join(root, 'README.md'),
      [
        'The claim (`src/webhooks/{claim,lease}.ts`), every key test (test/api/*.test.ts, `test/**/keys.test.ts`),',
        'the config as imports name it (src/config.js), a test by its suite (test/api/keys), a folder (`src/webhooks/`),',
        'a line (src/config.ts:12), a placeholder (test/<file>.test.ts), the end of a sentence: scripts/build.mjs.',
        'Not paths: https://example.com/src/gone.ts, node_modules/x/src/gone.ts, dist/src/gone.js.',
      ].join('\n'),
    );
    writeFileSync(join(root, 'docs/adr/0001-x.md'), 'Relative links: [claim](../../src/webhooks/claim.ts).\n');
    const run = check(root);
    assert.equal(run.status, 0, run.stderr);
  });

  it('fails on a dead path, naming the file, the line and the path', () => {
    writeFileSync(join(root, 'README.md'), 'Fine: src/config.ts\nGone: `src/auth/key-cache.ts` and src/webhooks/{claim,retry}.ts\n');
    writeFileSync(join(root, 'docs/adr/0001-x.md'), '# x\n\nSee [the test](../../test/api/gone.test.ts) and test/none/*.test.ts.\n');
    const run = check(root);
    assert.equal(run.status, 1);
    const lines = run.stderr.trim().split('\n');
    assert.deepEqual(lines.slice(0, -1), [
      'README.md:2: src/auth/key-cache.ts does not exist',
      'README.md:2: src/webhooks/retry.ts (from src/webhooks/{claim,retry}.ts) does not exist',
      'docs/adr/0001-x.md:3: test/api/gone.test.ts does not exist',
      'docs/adr/0001-x.md:3: test/none/*.test.ts does not exist',
    ]);
    assert.match(lines.at(-1) ?? '', /4 path\(s\) named in the docs do not exist/);
  });
});
