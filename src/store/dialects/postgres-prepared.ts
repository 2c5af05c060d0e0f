/**
 * Statements that PostgreSQL parses and plans once per session instead of at every run: a text
 * declared here (`prepared`) is sent as a named statement by every session of the pool Kysely runs
 * on (`preparingPool`). A domain action's statements are declared (postgres-actions.ts), so an
 * action's backend does not parse and plan its eight statements again each time (ADR 42).
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { PostgresPool, PostgresPoolClient } from '#kysely';

/** The name of the prepared statement of `text`: its hash, so it is the same in every process and session. */
export const statementName = (text: string): string => `wsops_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;

/** Declared texts and their statement names. */
const names = new Map<string, string>();

/** Declares `text` as a prepared statement (once per text; the set of texts is fixed by the code) and returns it. */
export function prepared(text: string): string {
  if (!names.has(text)) names.set(text, statementName(text));
  return text;
}

/** `pool` for Kysely, its sessions sending a declared text as a named statement, any other text as it is. */
export function preparingPool(pool: pg.Pool): PostgresPool {
  const clients = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => ({
    query: ((text: string | object, values?: readonly unknown[]) => {
      const name = typeof text === 'string' ? names.get(text) : undefined;
      if (name) return client.query({ name, text: text as string, values: values as unknown[] });
      return client.query(text as string, values as unknown[]);
    }) as unknown as PostgresPoolClient['query'],
    release: () => client.release(),
  });
  return {
    async connect() {
      const client = await pool.connect();
      let wrapped = clients.get(client);
      if (!wrapped) {
        wrapped = wrap(client);
        clients.set(client, wrapped);
      }
      return wrapped;
    },
    end: () => pool.end(),
  };
}
