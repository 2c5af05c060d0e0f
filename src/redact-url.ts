/**
 * Database URLs read without a driver: the address without its password (in the user part or a
 * `password=` parameter), for output, logs and error messages. Kept apart from the database code
 * so the settings and the CLI can use it without loading a database driver.
 */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):([^@]*)@/, '//$1:***@').replace(/([?&]password=)[^&]*/gi, '$1***');
}

/**
 * The file of a `sqlite:PATH` database URL as written (`:memory:` included), or undefined for
 * any other (a `postgres://` URL). The one place the URL's scheme decides the dialect
 * (store/dialects/index.ts opens by it); kept here, away from the drivers, for the CLI.
 */
export function sqliteFileOf(url: string): string | undefined {
  return url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : undefined;
}
