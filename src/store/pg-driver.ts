/**
 * The PostgreSQL driver, loaded at its first use: on SQLite no command loads pg and the ~30
 * modules it brings (ADR 37). pg is CommonJS, so `require` loads it synchronously and
 * `openDatabase` stays synchronous; `import('pg')` elsewhere gets this same instance.
 */
import { createRequire } from 'node:module';
import type pg from 'pg';

let driver: typeof pg | undefined;

export function pgDriver(): typeof pg {
  if (!driver) {
    driver = createRequire(import.meta.url)('pg') as typeof pg;
    // pg returns int8/numeric as strings; our counters fit in a JS number.
    driver.types.setTypeParser(20, (v) => Number.parseInt(v, 10));
  }
  return driver;
}
