/**
 * Source maps of modules that compile to no code (type-only modules such as the client's
 * generated OpenAPI types) map nothing, yet with `inlineSources` each carries its whole source:
 * the client's was a quarter of its tarball. The build removes such a map and the comment that
 * points to it; every map that maps code stays.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Removes the empty maps under `dir`; returns the paths removed. */
export function dropEmptyMaps(dir) {
  const removed = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.js.map')) continue;
    const map = join(entry.parentPath, entry.name);
    if (JSON.parse(readFileSync(map, 'utf8')).mappings !== '') continue;
    const js = map.slice(0, -'.map'.length);
    const code = readFileSync(js, 'utf8');
    writeFileSync(js, code.replace(/\n?\/\/# sourceMappingURL=\S+\s*$/, '\n'));
    rmSync(map);
    removed.push(map);
  }
  return removed;
}
