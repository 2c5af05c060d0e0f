/** `sqlite:./path.db` or `postgres://...` → the store. */
import { openPostgresStore } from './postgres-store.js';
import { openSqliteStore } from './sqlite-store.js';
import type { MirrorStore } from './store.js';

export const DEFAULT_DATABASE_URL = 'sqlite:./wsops-mirror.db';

export type ParsedDatabaseUrl = { dialect: 'sqlite'; path: string } | { dialect: 'postgres'; url: string };

export function parseDatabaseUrl(url: string): ParsedDatabaseUrl {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '') throw new Error('WSOPS_MIRROR_DATABASE_URL "sqlite:" needs a file path, e.g. sqlite:./wsops-mirror.db');
    return { dialect: 'sqlite', path };
  }
  if (/^postgres(ql)?:\/\//.test(url)) return { dialect: 'postgres', url };
  throw new Error(`WSOPS_MIRROR_DATABASE_URL must be sqlite:PATH or postgres://...; got "${url.replace(/\/\/[^@/]*@/, '//***@')}"`);
}

export function openStore(url: string): Promise<MirrorStore> {
  const parsed = parseDatabaseUrl(url);
  return parsed.dialect === 'sqlite' ? openSqliteStore(parsed.path) : openPostgresStore(parsed.url);
}
