/**
 * The address without its password (in the user part or a `password=` parameter), for output,
 * logs and error messages. Kept apart from the database code so the settings can use it
 * without loading a database driver.
 */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):([^@]*)@/, '//$1:***@').replace(/([?&]password=)[^&]*/gi, '$1***');
}
