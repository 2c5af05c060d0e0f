#!/usr/bin/env node
/**
 * The package.json a user installs carries no development scripts: npm (11 and later) asks
 * before running a dependency's install-time scripts such as `prepare`, and the development
 * scripts name files the tarball does not hold (scripts/build.mjs), so `npm start` failed inside
 * the installed package. `npm pack` and `npm publish` run `prepack` and `postpack` around making
 * the tarball (the pattern of pinst): `strip` writes the published manifest, keeping the copy as
 * it was beside it, and `restore` puts that copy back.
 *
 *   node scripts/publish-manifest.mjs strip|restore [package dir, default: the current one]
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** What goes to users: scripts that work in the installed package, nothing for development. */
export function publishedManifest(manifest) {
  const { scripts = {}, devDependencies: _dev, workspaces: _workspaces, allowScripts: _allow, ...rest } = manifest;
  const kept = Object.fromEntries(Object.entries(scripts).filter(([name]) => (manifest.publishedScripts ?? []).includes(name)));
  const { publishedScripts: _published, ...published } = rest;
  return Object.keys(kept).length > 0 ? { ...published, scripts: kept } : published;
}

const BACKUP = 'package.json.development';

function main() {
  const [command, dir = process.cwd()] = process.argv.slice(2);
  const file = join(resolve(dir), 'package.json');
  const backup = join(resolve(dir), BACKUP);
  if (command === 'strip') {
    if (existsSync(backup)) {
      process.stderr.write(
        `publish-manifest: ${backup} exists: an earlier pack did not finish; run "node scripts/publish-manifest.mjs restore ${dir}" first\n`,
      );
      process.exit(1);
    }
    const text = readFileSync(file, 'utf8');
    writeFileSync(backup, text);
    writeFileSync(file, `${JSON.stringify(publishedManifest(JSON.parse(text)), null, 2)}\n`);
  } else if (command === 'restore') {
    if (existsSync(backup)) renameSync(backup, file);
  } else {
    process.stderr.write('usage: publish-manifest.mjs strip|restore [package dir]\n');
    process.exit(2);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main();
