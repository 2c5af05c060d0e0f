/**
 * The console's static files, served from the package: a fixed allow-list read once at start
 * (no path from the URL ever reaches the file system), with an ETag and a long cache life.
 * Pages refer to them by name; a new release changes the ETag. The files sit in src/console/assets
 * (copied beside the compiled console by the build).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { vendorFile } from '../vendor-files.js';

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

const here = dirname(fileURLToPath(import.meta.url));

const FILES: Record<string, { path: string; type: string }> = {
  'console.css': { path: join(here, '..', 'console', 'assets', 'console.css'), type: 'text/css; charset=utf-8' },
  'console.js': { path: join(here, '..', 'console', 'assets', 'console.js'), type: 'text/javascript; charset=utf-8' },
  'uPlot.iife.min.js': { path: vendorFile('uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' },
  'uPlot.min.css': { path: vendorFile('uPlot.min.css'), type: 'text/css; charset=utf-8' },
};

function load(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const [name, file] of Object.entries(FILES)) {
    const body = readFileSync(file.path);
    assets.set(name, { body, type: file.type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` });
  }
  return assets;
}

let loaded: Map<string, Asset> | undefined;
function assets(): Map<string, Asset> {
  loaded ??= load();
  return loaded;
}

/** The URL pages use: versioned by content, so it can be cached for a year. */
export function assetUrl(name: keyof typeof FILES & string): string {
  const asset = assets().get(name);
  return `/console/assets/${name}${asset ? `?v=${asset.etag.slice(1, 13)}` : ''}`;
}

export function registerAssets(scope: FastifyInstance): void {
  const files = assets();
  scope.get('/assets/:name', async (request, reply) => {
    const asset = files.get((request.params as { name: string }).name);
    if (!asset) return reply.callNotFound();
    const versioned = (request.query as { v?: string }).v === asset.etag.slice(1, 13);
    reply
      .header('etag', asset.etag)
      // A versioned URL never changes content; an unversioned one is revalidated after an hour.
      .header('cache-control', versioned ? 'public, max-age=31536000, immutable' : 'public, max-age=3600')
      .header('x-content-type-options', 'nosniff');
    if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
    return reply.type(asset.type).send(asset.body);
  });
}
