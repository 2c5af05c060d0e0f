#!/usr/bin/env node
/**
 * `npm run lint`: holds docs/architecture.md's layout table against the code and against
 * scripts/import-rules.cjs (the rules dependency-cruiser enforces, ADR 44). Fails when a folder
 * or file under src/ has no row (or a row names one that is gone), when a row's "may import"
 * differs from the rules, when the rules' order is not bottom-up, or when more than two imports
 * run upward.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const { FOUNDATION, MAY_IMPORT, UPWARD } = createRequire(import.meta.url)('./import-rules.cjs');
const problems = [];

// Every entry of src/ is a foundation file or a part with rules, and every part exists.
const entries = readdirSync(`${root}src`, { withFileTypes: true }).map((e) => (e.isDirectory() ? `${e.name}/` : e.name));
const foundationFiles = new Set(FOUNDATION.map((name) => `${name}.ts`));
for (const entry of entries) {
  if (!foundationFiles.has(entry) && !(entry in MAY_IMPORT))
    problems.push(`src/${entry} has no rule in scripts/import-rules.cjs (MAY_IMPORT or FOUNDATION)`);
}
for (const part of [...Object.keys(MAY_IMPORT), ...foundationFiles]) {
  if (!entries.includes(part)) problems.push(`scripts/import-rules.cjs names src/${part}, which does not exist`);
}

// Bottom-up: a part may import only parts listed before it, so the allowed graph has no cycle.
const order = Object.keys(MAY_IMPORT);
for (const [part, allowed] of Object.entries(MAY_IMPORT)) {
  for (const target of allowed) {
    if (!(target in MAY_IMPORT)) problems.push(`src/${part} may import src/${target}, which has no rule`);
    else if (order.indexOf(target) >= order.indexOf(part))
      problems.push(`src/${part} may import src/${target}, listed after it: move it to UPWARD or reorder`);
  }
}
if (UPWARD.length > 2) problems.push(`${UPWARD.length} upward imports are allowed; at most 2`);

// docs/architecture.md: one row per part, `| \`src/part\` | what it holds | \`a/\`, \`b.ts\` |`.
const doc = readFileSync(`${root}docs/architecture.md`, 'utf8');
const rows = new Map();
for (const line of doc.split('\n')) {
  const cells = line.split('|').map((c) => c.trim());
  const m = /^`src\/([^`]+)`$/.exec(cells[1] ?? '');
  if (!m || cells.length < 5) continue;
  rows.set(
    m[1],
    [...cells[3].matchAll(/`([^`]+)`/g)].map((t) => t[1]),
  );
}
const same = (a, b) => a.length === b.length && [...a].sort().every((x, i) => x === [...b].sort()[i]);
for (const [part, allowed] of Object.entries(MAY_IMPORT)) {
  const upward = UPWARD.filter(([from]) => from === part).map(([, to]) => to);
  const documented = rows.get(part);
  if (!documented) problems.push(`docs/architecture.md has no row for src/${part}`);
  else if (!same(documented, [...allowed, ...upward])) {
    problems.push(
      `docs/architecture.md says src/${part} may import ${documented.join(', ') || 'nothing'}; the rules say ${[...allowed, ...upward].join(', ') || 'nothing'}`,
    );
  }
}
const foundationRow = rows.get('*.ts');
if (!foundationRow || !same(foundationRow, [...foundationFiles]))
  problems.push("docs/architecture.md's `src/*.ts` row must list exactly the FOUNDATION files of scripts/import-rules.cjs");
for (const part of rows.keys())
  if (part !== '*.ts' && !(part in MAY_IMPORT)) problems.push(`docs/architecture.md has a row for src/${part}, which has no rule`);

if (problems.length) {
  process.stderr.write(
    `check-architecture: docs/architecture.md, scripts/import-rules.cjs and src/ disagree:\n${problems.map((p) => `  - ${p}`).join('\n')}\n`,
  );
  process.exit(1);
}
