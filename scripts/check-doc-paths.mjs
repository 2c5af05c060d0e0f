/**
 * `node scripts/check-doc-paths.mjs [ROOT]` (part of `npm run lint`): every repository path that the
 * README or a page under docs/ names, under src/, test/, bench/, scripts/ or packages/, must
 * exist. A dead path is printed as `file:line: path` and the check exits 1.
 *
 * What counts as a path: a word starting with one of those folders (after nothing, a space, a
 * quote, a backtick, a bracket or `../` steps of a relative link; not inside a URL or another
 * path). Braces expand (`src/webhooks/{claim,lease}.ts` names two files); a `*` or `?` is a
 * glob that must match at least one file (`test/api/*.test.ts`, `packages/*\/test/**`); a name
 * with `.js` also matches its TypeScript source (`src/config.js` is `src/config.ts`, as imports
 * write it); a name without an extension also matches `.ts`, `.mjs`, `.js` or `.test.ts` (a test
 * file named as its suite); a path git ignores (dist/, bench/results/) is build output and is
 * not checked. Placeholders end
 * a path (`test/<file>.test.ts` checks `test/`), and so do `…`, `:` (a line number) and `#`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository checked: this one, or the folder given as the first argument (the test's). */
const ROOT = process.argv[2] ? resolve(process.argv[2]) : fileURLToPath(new URL('..', import.meta.url));
const FOLDERS = ['src', 'test', 'bench', 'scripts', 'packages'];
const PATH = new RegExp(`(?<![\\w./@~$%+=-])((?:\\.\\.?/)*)((?:${FOLDERS.join('|')})/(?:[\\w.@*?/-]|\\{[\\w.,*/-]*\\})*)`, 'g');

/** The Markdown files checked: README.md and every .md under docs/. */
function markdownFiles() {
  const files = ['README.md'];
  const walk = (dir) => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) files.push(path);
    }
  };
  if (existsSync(join(ROOT, 'docs'))) walk('docs');
  return files;
}

/** `a/{b,c}/d{e,f}` → the four paths (nested braces expand from the outside in). */
export function expandBraces(path) {
  const open = path.indexOf('{');
  if (open < 0) return [path];
  let depth = 0;
  for (let i = open; i < path.length; i++) {
    if (path[i] === '{') depth++;
    else if (path[i] === '}' && --depth === 0) {
      const parts = [];
      let start = open + 1;
      let inner = 0;
      for (let j = open + 1; j < i; j++) {
        if (path[j] === '{') inner++;
        else if (path[j] === '}') inner--;
        else if (path[j] === ',' && inner === 0) {
          parts.push(path.slice(start, j));
          start = j + 1;
        }
      }
      parts.push(path.slice(start, i));
      return parts.flatMap((part) => expandBraces(path.slice(0, open) + part + path.slice(i + 1)));
    }
  }
  return [path.replace('{', '')];
}

/** Every file and folder under dir (relative to the root, `/`-separated), node_modules and dist left out. */
function tree(dir, out = []) {
  let entries;
  try {
    entries = readdirSync(join(ROOT, dir), { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const path = `${dir}/${entry.name}`;
    out.push(path);
    if (entry.isDirectory()) tree(path, out);
  }
  return out;
}

const trees = new Map();
function globMatches(pattern) {
  const top = pattern.split('/')[0];
  if (!trees.has(top)) trees.set(top, tree(top));
  const source = pattern
    .replace(/\/$/, '')
    .split(/(\*\*\/?|\*|\?)/)
    .map((part) => {
      if (part === '**/' || part === '**') return '(?:.*/)?[^/]*';
      if (part === '*') return '[^/]*';
      if (part === '?') return '[^/]';
      return part.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  const regex = new RegExp(`^${source}$`);
  return trees.get(top).some((path) => regex.test(path));
}

/** Whether a named path (braces already expanded) exists. */
export function exists(path) {
  const clean = path.replace(/\/+$/, '');
  if (/[*?]/.test(clean)) return globMatches(clean);
  const at = (p) => existsSync(join(ROOT, p));
  if (at(clean)) return !path.endsWith('/') || statSync(join(ROOT, clean)).isDirectory();
  if (/\.js$/.test(clean) && ['.ts', '.tsx', '.mts'].some((ext) => at(clean.replace(/\.js$/, ext)))) return true;
  if (!/\.\w+$/.test(clean.split('/').pop()) && ['.ts', '.mjs', '.js', '.test.ts'].some((ext) => at(clean + ext))) return true;
  return ignored(clean);
}

/** Build output and benchmark results (ignored by git: dist/, bench/results/) need not exist in a checkout. */
function ignored(path) {
  // As a folder too: `packages/*/dist/` ignores only folders, and a path that is absent is not known to be one.
  const git = spawnSync('git', ['check-ignore', '--no-index', path, `${path}/`], { cwd: ROOT });
  return git.status === 0;
}

/** The dead paths of one Markdown text: [{line, path}]. */
export function deadPaths(text) {
  const dead = [];
  text.split('\n').forEach((line, index) => {
    for (const match of line.matchAll(PATH)) {
      // Trailing sentence punctuation is not part of the path (`see src/config.ts.`).
      const named = match[2].replace(/[.,]+$/, '');
      for (const path of expandBraces(named)) {
        if (!exists(path)) dead.push({ line: index + 1, path: named === path ? path : `${path} (from ${named})` });
      }
    }
  });
  return dead;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let count = 0;
  for (const file of markdownFiles()) {
    for (const { line, path } of deadPaths(readFileSync(join(ROOT, file), 'utf8'))) {
      process.stderr.write(`${relative(ROOT, join(ROOT, file))}:${line}: ${path} does not exist\n`);
      count++;
    }
  }
  if (count > 0) {
    process.stderr.write(
      `check-doc-paths: ${count} path(s) named in the docs do not exist; point them at the current file or remove them\n`,
    );
    process.exit(1);
  }
  process.stdout.write('check-doc-paths: every src/, test/, bench/, scripts/ and packages/ path named in README.md and docs/ exists\n');
}
