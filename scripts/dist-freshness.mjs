/**
 * Is dist/ older than the sources it is built from? In a git checkout bin/wsops and
 * bin/wsops-mirror ask this before running compiled code, so an edit to src/ without
 * `npm run build` fails loudly instead of running yesterday's code (a test spawning the CLI
 * would otherwise pass or fail on stale JavaScript). The build writes dist/.build-stamp with the
 * time it started; any source file or folder changed after that (an edit, a checkout, a deleted
 * file, which changes its folder) makes dist stale. A stat walk of ~300 entries: 2-5 ms.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** What the build reads, relative to the repository root. */
export const SOURCES = [
  'src',
  'packages/client/src',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'packages/client/tsconfig.build.json',
];
export const STAMP = 'dist/.build-stamp';

/** The first file or folder under `path` changed after `since` (ms), if any. */
function changedSince(path, since) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return undefined;
  if (stat.mtimeMs > since) return path;
  if (!stat.isDirectory()) return undefined;
  for (const name of readdirSync(path)) {
    const changed = changedSince(join(path, name), since);
    if (changed) return changed;
  }
  return undefined;
}

/** Why dist/ under `root` cannot be run as it is, or undefined when it is up to date. */
export function staleReason(root) {
  const stamp = statSync(join(root, STAMP), { throwIfNoEntry: false });
  if (!stamp) return 'dist/ is missing or was not built by `npm run build`';
  for (const source of SOURCES) {
    const changed = changedSince(join(root, source), stamp.mtimeMs);
    if (changed) return `${relative(root, changed)} changed after the last build`;
  }
  return undefined;
}
