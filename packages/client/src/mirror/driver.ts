/**
 * The mirror's database drivers are optional peer dependencies: an integrator installs the one
 * their database needs. A missing one is a configuration error that names the package to
 * install, not a module-resolution stack trace.
 */
export async function loadDriver<T>(name: 'better-sqlite3' | 'pg', database: string): Promise<T> {
  try {
    return ((await import(name)) as { default: T }).default;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && String((err as Error).message).includes(`'${name}'`)) {
      throw new Error(`a ${database} mirror needs the ${name} package, which is not installed: run \`npm install ${name}\``);
    }
    throw err;
  }
}
