/**
 * A database that cannot be opened or reached, said in one line: which database (its address
 * without the password) and what to do. Without this the operator got the driver's stack (ten
 * lines of kysely and pg frames) and no word of which address was tried.
 */
import { dirname, resolve } from 'node:path';
import { redactUrl, sqliteFileOf } from '../redact-url.js';

export class DatabaseUnavailableError extends Error {}

const UNREACHABLE: Record<string, string> = {
  ECONNREFUSED: 'connection refused: is PostgreSQL running, on that host and port?',
  ENOTFOUND: 'host name not found: check the host in the address',
  EAI_AGAIN: 'host name could not be looked up: check the host in the address and the DNS',
  ETIMEDOUT: 'no answer: check the host, the port and any firewall between',
  EHOSTUNREACH: 'host unreachable: check the host in the address and the network',
  ENETUNREACH: 'network unreachable: check the host in the address and the network',
  ECONNRESET: 'the server closed the connection: check that the port is PostgreSQL and its TLS settings',
};

/** PostgreSQL's answers (SQLSTATE) that mean "this database, as addressed, is not there for you". */
const REFUSED: Record<string, string> = {
  '28000': 'check the user name in the address (and pg_hba.conf)',
  '28P01': 'check the user name and password in the address',
  '57P03': 'PostgreSQL is starting or shutting down: try again shortly',
  '53300': 'PostgreSQL has no free connection slot: try again, or raise max_connections',
};

/**
 * The one-line reason `err` (thrown while opening `url` or by its first query) means the database
 * is unavailable, or undefined for any other failure (those keep their own message).
 */
export function databaseFailure(err: unknown, url: string): DatabaseUnavailableError | undefined {
  const shown = redactUrl(url);
  const e = err as { code?: unknown; message?: unknown; errors?: { code?: unknown }[] };
  const code = typeof e?.code === 'string' ? e.code : typeof e?.errors?.[0]?.code === 'string' ? e.errors[0].code : undefined;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const fix = 'Check WSOPS_DATABASE_URL (in the environment or .env).';
  const file = sqliteFileOf(url);
  if (file !== undefined) {
    const path = resolve(file);
    if (code === 'SQLITE_NOTADB') return new DatabaseUnavailableError(`${shown} (${path}) is not a SQLite database. ${fix}`);
    if (code?.startsWith('SQLITE_READONLY')) {
      return new DatabaseUnavailableError(`cannot write to ${shown} (${path}): the file or its directory is read-only. ${fix}`);
    }
    if (code === 'SQLITE_CANTOPEN' || /directory does not exist/.test(message)) {
      return new DatabaseUnavailableError(`cannot open ${shown} (${path}): check that its directory exists and is writable. ${fix}`);
    }
    if (code !== undefined && ['ENOTDIR', 'EACCES', 'EPERM', 'EROFS', 'EEXIST', 'ENOENT'].includes(code)) {
      return new DatabaseUnavailableError(
        `cannot open ${shown}: its directory ${dirname(path)} cannot be created or written (${code}). ${fix}`,
      );
    }
    return undefined;
  }
  if (code !== undefined && code in UNREACHABLE) {
    return new DatabaseUnavailableError(`cannot reach the database ${shown}: ${UNREACHABLE[code]} ${fix}`);
  }
  if (code === '3D000') {
    const name = decodeURIComponent(new URL(url).pathname.slice(1)) || 'NAME';
    return new DatabaseUnavailableError(
      `the database ${shown} does not exist: create it (\`createdb ${name}\`) or fix the name in the address. ${fix}`,
    );
  }
  if (code !== undefined && code in REFUSED) {
    return new DatabaseUnavailableError(`the database ${shown} refused the connection: ${message}; ${REFUSED[code]}. ${fix}`);
  }
  return undefined;
}
