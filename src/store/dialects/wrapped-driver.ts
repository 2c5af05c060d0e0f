/** A Kysely dialect whose driver is wrapped (postgres-jobs.ts announces jobs, sqlite-write-lock.ts waits for the lock). */
import type { Dialect, Driver } from '#kysely';

/** `dialect` as it is, but its driver made by `wrap` around the dialect's own. */
export function withWrappedDriver(dialect: Dialect, wrap: (driver: Driver) => Driver): Dialect {
  return {
    createDriver: () => wrap(dialect.createDriver()),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}
