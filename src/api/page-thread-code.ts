/**
 * What a page thread runs. A worker thread does not inherit bin/wsops' TypeScript loader: loading
 * page-thread.ts through tsx in the thread took 400–800 ms of CPU (tsx starts its own loader
 * thread, then transforms module by module), and the first pages of a walk waited for it on a
 * 2-core machine. Instead, the thread's modules are bundled once per process with esbuild (which
 * tsx already runs on every module) into one ES module, passed as a `data:` URL: the thread is
 * ready in about 100 ms. Packages stay outside the bundle, imported by absolute file URL (a
 * `data:` module cannot resolve a bare name). Should bundling fail, the thread starts through
 * tsx as before (page-thread-entry.mjs): slower, never broken.
 */
import { fileURLToPath } from 'node:url';

const ENTRY = new URL('./page-thread.ts', import.meta.url);
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

function bundleOnce(): Promise<URL> {
  bundled ??= bundle();
  return bundled;
}

/**
 * The module a page thread starts from: the bundle (made once per process), or the tsx entry
 * when bundling failed (with why). `build` replaces the bundler (tests).
 */
export async function pageThreadModule(build: () => Promise<URL> = bundleOnce): Promise<{ url: URL; bundleError?: string }> {
  try {
    return { url: await build() };
  } catch (err) {
    return { url: TSX_ENTRY, bundleError: err instanceof Error ? err.message : String(err) };
  }
}
