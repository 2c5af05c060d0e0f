#!/usr/bin/env node
/**
 * `npm run build`: compiles the server (src/ -> dist/) and @wsops/client (packages/client/src ->
 * packages/client/dist) with tsc, incrementally, and copies the console's static files beside the
 * compiled code that reads them. Skips tsc entirely when dist/ is up to date (the check
 * bin/wsops makes), so `npm test` and `npm start` pay nothing for an unchanged tree.
 * `--force` rebuilds from scratch (removes both dist folders first).
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, cpSync, mkdirSync, openSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { STAMP, staleReason } from './dist-freshness.mjs';
import { dropEmptyMaps } from './drop-empty-maps.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const force = process.argv.includes('--force');
if (force) for (const dist of ['dist', 'packages/client/dist']) rmSync(join(root, dist), { recursive: true, force: true });

const why = staleReason(root);
if (why === undefined) process.exit(0);

const started = new Date();
// TypeScript 7's native compiler (ADR 45); the `typescript` package stays 5.9 for the tools that use its API.
const tsc = join(dirname(createRequire(import.meta.url).resolve('@typescript/native/package.json')), 'bin/tsc');
// The two projects compile side by side (one core each).
const compile = (project) =>
  new Promise((resolve) =>
    spawn(process.execPath, [tsc, '-p', project], { cwd: root, stdio: 'inherit' }).on('close', (code) => resolve({ project, code })),
  );
for (const { project, code } of await Promise.all(['tsconfig.build.json', 'packages/client/tsconfig.build.json'].map(compile))) {
  if (code !== 0) {
    process.stderr.write(`build: tsc -p ${project} failed\n`);
    process.exit(code ?? 1);
  }
}
for (const dist of ['dist', 'packages/client/dist']) dropEmptyMaps(join(root, dist));
// Each `#name` of package.json's "imports" is the npm package `name` bundled into the one file
// the entry names (ADR 46): Node's module loader pays per file, and Kysely is 262 files, zod 95.
// Every module imports them by that name, so a process holds one copy of each. Their licences
// ship beside the bundles.
const { build: bundle } = await import('esbuild');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
for (const [specifier, { default: target }] of Object.entries(manifest.imports)) {
  const name = specifier.slice(1);
  const packageDir = join(root, 'node_modules', name);
  const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
  await bundle({
    stdin: { contents: `export * from '${name}';`, resolveDir: root, loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outfile: join(root, target),
    banner: { js: `// ${name} ${version}, bundled by scripts/build.mjs (ADR 46); licence: ${name}.LICENSE beside this file.` },
    logLevel: 'warning',
  });
  cpSync(join(packageDir, 'LICENSE'), join(root, dirname(target), `${name}.LICENSE`));
}
// Read at run time from beside the compiled module (src/console-kit/assets.ts).
cpSync(join(root, 'src/console/assets'), join(root, 'dist/console/assets'), { recursive: true });
// The browser files of dev-only packages the server serves (src/vendor-files.ts): copied, so
// an install without devDependencies serves them.
const { VENDOR_FILES, VENDOR_DIR } = await import(pathToFileURL(join(root, 'dist/vendor-files.js')).href);
mkdirSync(VENDOR_DIR, { recursive: true });
for (const [name, source] of Object.entries(VENDOR_FILES)) cpSync(source(), join(VENDOR_DIR, name));
// `wsops --help` prints this text (bin/wsops) rather than load every command's module (~1 s).
const help = spawnSync(process.execPath, ['dist/cli/main.js', '--help'], { cwd: root, encoding: 'utf8' });
if (help.status !== 0) {
  process.stderr.write(`build: dist/cli/main.js --help failed:\n${help.stderr}`);
  process.exit(1);
}
writeFileSync(join(root, 'dist/cli/help.txt'), help.stdout);
// The stamp carries the time the build started: a file saved during the build counts as newer.
closeSync(openSync(join(root, STAMP), 'w'));
utimesSync(join(root, STAMP), started, started);
