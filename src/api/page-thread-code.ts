/**
 * What a page thread runs. From the build (dist/api/page-thread-code.js, what bin/wsops and an
 * installed server run), the thread loads its compiled sibling dist/api/page-thread.js: plain
 * JavaScript, nothing to transform, ready in about 100 ms.
 *
 * From the TypeScript sources (the tests, `node --import tsx`), a worker thread does not inherit
 * the parent's loader, and loading page-thread.ts through tsx in the thread took 400–800 ms of
 * CPU. There the thread's modules are bundled once per process with esbuild (a development
 * dependency; tsx runs it already) into one ES module passed as a `data:` URL; packages stay
 * outside the bundle, imported by absolute file URL (a `data:` module cannot resolve a bare name).
 * Should bundling fail, the thread starts through tsx (page-thread-entry.mjs): slower, never broken.
 */
import { fileURLToPath } from 'node:url';

const COMPILED = import.meta.url.endsWith('.js');
const ENTRY = new URL(COMPILED ? './page-thread.js' : './page-thread.ts', import.meta.url);
const TSX_ENTRY = new URL('./page-thread-entry.mjs', import.meta.url);

let bundled: Promise<URL> | undefined;

async function bundle(): Promise<URL> {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [fileURLToPath(ENTRY)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    logLevel: 'silent',
    plugins: [
      {
        name: 'packages-by-absolute-url',
        setup(build) {
          build.onResolve({ filter: /^[^./]/ }, (args) =>
            args.path.startsWith('node:') ? { path: args.path, external: true } : { path: import.meta.resolve(args.path), external: true },
          );
        },
      },
    ],
  });
  const code = result.outputFiles?.[0]?.text;
  if (!code) throw new Error('esbuild produced no output for page-thread.ts');
  return new URL(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`);
}

function sourceEntry(): Promise<URL> {
  bundled ??= bundle();
  return bundled;
}

/**
 * The module a page thread starts from: the compiled entry, or (running from the sources) the
 * bundle made once per process, or the tsx entry when bundling failed (with why). `build`
 * replaces the bundler (tests).
 */
export async function pageThreadModule(build?: () => Promise<URL>): Promise<{ url: URL; bundleError?: string }> {
  if (COMPILED && !build) return { url: ENTRY };
  try {
    return { url: await (build ?? sourceEntry)() };
  } catch (err) {
    return { url: TSX_ENTRY, bundleError: err instanceof Error ? err.message : String(err) };
  }
}
