#!/usr/bin/env node
/**
 * What each direct dependency costs an install: `node scripts/dependency-sizes.mjs` reads
 * package-lock.json and the installed node_modules, and prints, for every dependency in
 * package.json, the packages and bytes it brings that nothing else needs (its exclusive tree)
 * and its whole tree, largest first; then the totals for a full install (`npm ci`) and a
 * run-time one (`npm ci --omit=dev`). Sizes are the bytes of the files on disk.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const packages = lock.packages;

/** Bytes of a package folder, without the packages nested in its own node_modules (they are counted apart). */
function bytesOf(dir) {
  let total = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0; // an optional package for another platform: not installed
  }
  for (const e of entries) {
    if (e.name === 'node_modules') continue;
    const path = join(dir, e.name);
    if (e.isDirectory()) total += bytesOf(path);
    else if (e.isFile()) total += statSync(path).size;
  }
  return total;
}

/** The lock entry a dependency `name` of the package at `from` resolves to (Node's lookup, walking up). */
function resolve(from, name) {
  for (let base = from; ; ) {
    const candidate = `${base ? `${base}/` : ''}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!base) return undefined;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut === -1 ? '' : base.slice(0, cut);
  }
}

function tree(start) {
  const seen = new Set();
  const stack = [start];
  while (stack.length) {
    const key = stack.pop();
    if (!key || seen.has(key)) continue;
    seen.add(key);
    const p = packages[key];
    for (const dep of Object.keys({ ...p.dependencies, ...p.optionalDependencies, ...p.peerDependencies })) stack.push(resolve(key, dep));
  }
  return seen;
}

const size = new Map();
const sizeOf = (key) => {
  if (!size.has(key)) size.set(key, bytesOf(join(root, packages[key]?.link ? packages[key].resolved : key)));
  return size.get(key);
};
const direct = [
  ...Object.keys(manifest.dependencies ?? {}).map((name) => ({ name, dev: false })),
  ...Object.keys(manifest.devDependencies ?? {}).map((name) => ({ name, dev: true })),
];
const trees = direct.map((d) => ({ ...d, keys: tree(resolve('', d.name)) }));
const owners = new Map();
for (const t of trees) for (const k of t.keys) owners.set(k, (owners.get(k) ?? 0) + 1);
const mb = (n) => `${(n / 2 ** 20).toFixed(1)} MB`;
const rows = trees
  .map((t) => {
    const exclusive = [...t.keys].filter((k) => owners.get(k) === 1);
    return {
      name: t.name,
      kind: t.dev ? 'dev' : 'run time',
      exclusivePackages: exclusive.length,
      exclusiveBytes: exclusive.reduce((s, k) => s + sizeOf(k), 0),
      treeBytes: [...t.keys].reduce((s, k) => s + sizeOf(k), 0),
    };
  })
  .sort((a, b) => b.exclusiveBytes - a.exclusiveBytes);
console.log('dependency'.padEnd(34), 'kind'.padEnd(9), 'own packages'.padStart(12), 'own size'.padStart(10), 'whole tree'.padStart(11));
for (const r of rows) {
  console.log(
    r.name.padEnd(34),
    r.kind.padEnd(9),
    String(r.exclusivePackages).padStart(12),
    mb(r.exclusiveBytes).padStart(10),
    mb(r.treeBytes).padStart(11),
  );
}
const installed = Object.keys(packages).filter((k) => k.startsWith('node_modules/') || k.includes('/node_modules/'));
const all = installed.filter((k) => !packages[k].link);
const runTime = all.filter((k) => !packages[k].dev && !packages[k].devOptional);
const total = (keys) => keys.reduce((s, k) => s + sizeOf(k), 0);
console.log(`\nnpm ci:               ${all.length} packages, ${mb(total(all))}`);
console.log(`npm ci --omit=dev:    ${runTime.length} packages, ${mb(total(runTime))}`);
