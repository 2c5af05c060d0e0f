/**
 * Records a test may delete whatever rule protects referenced records: copies of stored records
 * under new ids, which no other record names.
 */
import { AppError } from '../../src/errors.js';
import { registerByPath } from '../../src/registers/catalogue.js';
import type { Services } from '../../src/services.js';
import { putRecord } from '../../src/writes/record-writes.js';

/**
 * Writes `n` copies (ids `<prefix>_<tag><i>`) of the first stored record of the register whose
 * copy is valid (its references all exist), through the system of record's PUT.
 */
export async function unreferencedCopies(services: Services, workspaceId: string, path: string, n: number, tag: string): Promise<string[]> {
  const register = registerByPath(path);
  if (!register) throw new Error(`no register ${path}`);
  const rows = await services.database.db
    .selectFrom('records')
    .select('doc')
    .where('workspace_id', '=', workspaceId)
    .where('register', '=', path)
    .orderBy('id')
    .limit(20)
    .execute();
  for (const row of rows) {
    const doc = JSON.parse(row.doc) as Record<string, unknown>;
    delete doc.created_at;
    delete doc.updated_at;
    for (const name of Object.keys(register.derived ?? {})) delete doc[name];
    const ids: string[] = [];
    try {
      for (let i = 0; i < n; i++) {
        const id = `${register.idPrefix}_${tag}${i}`;
        await putRecord(services, workspaceId, register, id, { ...doc, id });
        ids.push(id);
      }
      return ids;
    } catch (err) {
      // A record whose references a test already deleted: try the next one.
      if (!(err instanceof AppError) || err.code !== 'invalid_record' || ids.length > 0) throw err;
    }
  }
  throw new Error(`no record of ${path} in ${workspaceId} can be copied`);
}
