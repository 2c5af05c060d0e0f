/**
 * Browser files the server serves from packages it does not otherwise run: Scalar's API
 * reference bundle (the portal) and uPlot (the console's charts). The build copies them into
 * dist/vendor/ (scripts/build.mjs), so the packages are devDependencies and an install without
 * them (`npm ci --omit=dev`, the packed tarball) does not carry the hundreds of packages that
 * @scalar/api-reference brings for one browser file (ADR 28). Run from source (tsx, the tests), the files
 * are read from node_modules.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
// Neither package exports the path of its browser files; they sit in its dist/.
const scalarDist = () => dirname(require.resolve('@scalar/api-reference'));
const uplotDist = () => join(dirname(require.resolve('uplot/package.json')), 'dist');

/** Each file by the name it is served and copied under, and where it is in its package. */
export const VENDOR_FILES = {
  'scalar-standalone.js': () => join(scalarDist(), 'browser', 'standalone.js'),
  'uPlot.iife.min.js': () => join(uplotDist(), 'uPlot.iife.min.js'),
  'uPlot.min.css': () => join(uplotDist(), 'uPlot.min.css'),
} as const;

export type VendorFile = keyof typeof VENDOR_FILES;

/** The build's folder for them: dist/vendor beside this module compiled. */
export const VENDOR_DIR = join(dirname(fileURLToPath(import.meta.url)), 'vendor');

/** The path to read a vendored file from: the build's copy, else the package in node_modules. */
export function vendorFile(name: VendorFile): string {
  const built = join(VENDOR_DIR, name);
  return existsSync(built) ? built : VENDOR_FILES[name]();
}
