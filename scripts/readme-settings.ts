/**
 * `npm run readme-settings`: writes the README's settings table from the settings schema
 * (src/config.ts), between the two markers below. test/config.test.ts fails when the README's
 * table is not what this would write.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { settingsTable } from '../src/config.js';

export const README = fileURLToPath(new URL('../README.md', import.meta.url));
const START = '<!-- settings table: generated from src/config.ts by `npm run readme-settings`; edit there -->';
const END = '<!-- end of the settings table -->';

/** The README with its settings table replaced by the generated one. */
export function withSettingsTable(readme: string): string {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`README.md must hold the markers ${START} and ${END}`);
  return `${readme.slice(0, start + START.length)}\n${settingsTable()}\n${readme.slice(end)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const readme = readFileSync(README, 'utf8');
  const updated = withSettingsTable(readme);
  if (updated !== readme) writeFileSync(README, updated);
  process.stdout.write(updated === readme ? 'README.md: the settings table is up to date\n' : 'README.md: settings table written\n');
}
