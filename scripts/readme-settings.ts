/**
 * `npm run readme-settings`: writes the settings table of docs/guide/settings.md (the page the
 * README's "Settings" links to) from the settings schema (src/config.ts), between the two markers
 * below. test/config.test.ts fails when the page's table is not what this would write.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { settingsTable } from '../src/config.js';

export const SETTINGS_PAGE = fileURLToPath(new URL('../docs/guide/settings.md', import.meta.url));
const START = '<!-- settings table: generated from src/config.ts by `npm run readme-settings`; edit there -->';
const END = '<!-- end of the settings table -->';

/** The settings page with its table replaced by the generated one. */
export function withSettingsTable(page: string): string {
  const start = page.indexOf(START);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/guide/settings.md must hold the markers ${START} and ${END}`);
  return `${page.slice(0, start + START.length)}\n${settingsTable()}\n${page.slice(end)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const page = readFileSync(SETTINGS_PAGE, 'utf8');
  const updated = withSettingsTable(page);
  if (updated !== page) writeFileSync(SETTINGS_PAGE, updated);
  process.stdout.write(
    updated === page ? 'docs/guide/settings.md: the settings table is up to date\n' : 'docs/guide/settings.md: settings table written\n',
  );
}
