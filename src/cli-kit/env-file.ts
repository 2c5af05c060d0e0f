/**
 * The CLI (and so `wsops serve`) reads `.env` in the working directory before its settings, so
 * an operator does not have to repeat every WSOPS_* variable in each shell (ADR 27). A
 * variable already in the environment wins over the file. The file is parsed by Node's own
 * `util.parseEnv` (the parser of `node --env-file`); since that parser skips or misreads lines
 * it does not understand, each line is checked first, and a wrong one is a one-line error.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { ConfigError, RETIRED_SETTINGS, SETTINGS } from '../config.js';

export const ENV_FILE = '.env';

const ASSIGNMENT = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$/;
const KNOWN = new Set<string>([...Object.values(SETTINGS).map((s) => s.env), ...Object.keys(RETIRED_SETTINGS)]);

let fromFile: ReadonlySet<string> = new Set();
let lineOf: ReadonlyMap<string, number> = new Map();

/** The names whose values came from `.env` (not overridden by the environment), for `wsops status`. */
export function namesFromEnvFile(): ReadonlySet<string> {
  return fromFile;
}

/** Where a setting's value came from when `.env` gave it ("<path> line 3"), for a message that refuses the value. */
export function envFileLineOf(name: string): string | undefined {
  const line = fromFile.has(name) ? lineOf.get(name) : undefined;
  return line === undefined ? undefined : `${ENV_FILE} line ${line}`;
}

/** Reads `.env` from `dir` into `env` (names `env` already has are left alone); returns the names it set. */
export function loadEnvFile(dir: string = process.cwd(), env: NodeJS.ProcessEnv = process.env): ReadonlySet<string> {
  const path = join(dir, ENV_FILE);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return fromFile;
    throw new ConfigError(`cannot read ${path}: ${(err as Error).message}`);
  }
  lineOf = checkLines(text, path);
  const set = new Set<string>();
  for (const [name, value] of Object.entries(parseEnv(text))) {
    if (env[name] !== undefined) continue;
    env[name] = value;
    set.add(name);
  }
  fromFile = set;
  return set;
}

/**
 * Every line is blank, a `#` comment, or `NAME=value` (`export NAME=value` too); a quoted value may
 * run over several lines. A WSOPS_ name must be a setting: a misspelt one would otherwise leave the
 * setting at its default without a word (the very surprise `.env` is meant to end). Messages name
 * the line, never its value (it may be a secret).
 */
function checkLines(text: string, path: string): Map<string, number> {
  const lines = text.split(/\r?\n/);
  const assigned = new Map<string, number>();
  let closing: string | undefined;
  for (const [i, line] of lines.entries()) {
    const where = `${path} line ${i + 1}`;
    if (closing !== undefined) {
      if (line.includes(closing)) closing = undefined;
      continue;
    }
    if (/^\s*(#.*)?$/.test(line)) continue;
    const match = ASSIGNMENT.exec(line);
    if (!match) throw new ConfigError(`${where} is not NAME=value; write it as NAME=value, or start it with # to keep it as a comment`);
    const [, name = '', value = ''] = match;
    if (name.startsWith('WSOPS_') && !KNOWN.has(name)) {
      const near = nearest(name);
      throw new ConfigError(
        `${where}: ${name} is not a wsops setting${near ? ` (did you mean ${near}?)` : ''}; the settings are listed in README.md, "Settings"`,
      );
    }
    assigned.set(name, i + 1); // the last assignment of a name is the one that counts
    const quote = /^["'`]/.exec(value)?.[0];
    if (quote !== undefined && !value.slice(1).includes(quote)) closing = quote;
  }
  if (closing !== undefined) throw new ConfigError(`${path}: a value opened with ${closing} is never closed; add the closing ${closing}`);
  return assigned;
}

/** The known setting closest to a misspelt name (at most 3 edits away). */
function nearest(name: string): string | undefined {
  let best: string | undefined;
  let bestDistance = 4;
  for (const known of KNOWN) {
    const d = distance(name, known);
    if (d < bestDistance) [best, bestDistance] = [known, d];
  }
  return best;
}

function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length] ?? 0;
}
