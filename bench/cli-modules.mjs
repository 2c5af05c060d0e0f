/**
 * `node --import ./bench/cli-modules.mjs bin/wsops ...` with WSOPS_MODULE_LIST=<file>: writes
 * the path of every JavaScript file the process loaded to <file>, one a line (duplicates
 * possible; the reader dedupes). Used by bench/cli-bench.ts to count what a command loads, in
 * a run of its own (the hooks cost time; the timed runs go without them).
 *
 * Node 22.15+ (module.registerHooks): one synchronous hook on the main thread sees every ESM
 * import and every require(). Node 20: an off-thread loader (module.register) sees the ESM
 * imports, appending to the file itself, and require.cache, read at exit, holds the CommonJS.
 */
import { appendFileSync } from 'node:fs';
import module, { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { isMainThread } from 'node:worker_threads';

const out = process.env.WSOPS_MODULE_LIST;
// The loader thread (Node 20) imports this file too: only the main thread installs anything.
if (out && isMainThread) {
  const record = (url) => {
    if (url.startsWith('file:')) appendFileSync(out, `${fileURLToPath(url)}\n`);
  };
  if (typeof module.registerHooks === 'function') {
    module.registerHooks({
      load(url, context, next) {
        record(url);
        return next(url, context);
      },
    });
  } else {
    module.register(import.meta.url, { data: { out } });
    const require = createRequire(import.meta.url);
    process.on('exit', () => {
      const paths = Object.keys(require.cache);
      if (paths.length) appendFileSync(out, `${paths.join('\n')}\n`);
    });
  }
}

/** Loader-thread side on Node 20 (module.register runs this same file there). */
let listFile;
export function initialize(data) {
  listFile = data.out;
}
export async function load(url, context, next) {
  if (listFile && url.startsWith('file:')) appendFileSync(listFile, `${fileURLToPath(url)}\n`);
  return next(url, context);
}
