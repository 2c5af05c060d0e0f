/**
 * The system of record's write side on the internal listener (ADR 20), declared once for every
 * register like the read routes: PUT, PATCH and DELETE of one record, GET of one record with
 * its ETag, and the NDJSON import and export of a workspace. Operator token, as the actions.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import type { FailureThrottle } from '../guards/failure-throttle.js';
import { authorizeOperator } from '../guards/operator-token.js';
import { JSON_TYPE, NDJSON_TYPE } from '../media-types.js';
import { idPattern, idRule } from '../registers/fields.js';
import type { Database } from '../store/database.js';
import { getWorkspace } from '../workspaces/workspaces.js';
import { exportRecords, exportRegistersParam } from './export.js';
import { importRecords } from './import.js';
import { etagOf } from './record-changes.js';
import { checkId, deleteOne, type Preconditions, patchRecord, putRecord, registerNamed, type WriteResult } from './record-writes.js';
import type { RecordStore } from './records.js';

/** What this file takes of the services built at start (services.ts). */
export interface RecordWriteRoutesServices {
  config: Config;
  database: Database;
  records: RecordStore;
  failureThrottle: FailureThrottle;
  clock: Clock;
}

/** A record with long nested lists fits; a bigger body is a 413. */
export const RECORD_BODY_LIMIT = 1024 * 1024;

type RecordParams = { workspace_id: string; register: string; id: string };

function workspaceOf(params: { workspace_id: string }): string {
  if (!idPattern('wsp').test(params.workspace_id)) {
    throw new AppError('invalid_parameter', `The workspace id must be ${idRule('wsp')}.`, {
      param: 'workspace_id',
    });
  }
  return params.workspace_id;
}

function preconditions(request: FastifyRequest): Preconditions {
  const one = (name: string) => {
    const v = request.headers[name];
    return Array.isArray(v) ? v.join(',') : v;
  };
  return { ifMatch: one('if-match'), ifNoneMatch: one('if-none-match') };
}

function sendRecord(reply: FastifyReply, result: WriteResult, status: number) {
  return reply.code(status).header('ETag', result.etag).type(JSON_TYPE).send(result.doc);
}

/** Only the named parameters; `true`/`false` flags. Anything else is a 400 naming it. */
function queryOf(query: unknown, flagNames: readonly string[], textNames: readonly string[] = []): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (const [k, v] of Object.entries((query ?? {}) as Record<string, unknown>)) {
    const name = k.slice(0, 40);
    if (typeof v !== 'string') throw new AppError('unknown_parameter', `"${name}" is given more than once.`, { param: name });
    if (textNames.includes(k)) out[k] = v;
    else if (!flagNames.includes(k)) {
      throw new AppError(
        'unknown_parameter',
        `Unknown parameter "${name}"; this operation takes ${[...flagNames, ...textNames].join(', ') || 'none'}.`,
        { param: name },
      );
    } else if (v !== 'true' && v !== 'false') throw new AppError('invalid_parameter', `${k} must be true or false.`, { param: k });
    else out[k] = v === 'true';
  }
  return out;
}

export function registerRecordWriteRoutes(app: FastifyInstance, services: RecordWriteRoutesServices): void {
  // A merge patch is JSON; the import's body is read as a stream, never parsed whole.
  app.addContentTypeParser('application/merge-patch+json', { parseAs: 'string' }, app.getDefaultJsonParser('error', 'error'));
  app.addContentTypeParser(NDJSON_TYPE, (_request, payload, done) => done(null, payload));
  const onRequest = async (request: FastifyRequest, reply: FastifyReply) => authorizeOperator(services, request, reply);
  const path = '/internal/v1/workspaces/:workspace_id/:register/:id';

  app.get<{ Params: RecordParams }>(path, { onRequest }, async (request, reply) => {
    const register = registerNamed(request.params.register);
    const workspaceId = workspaceOf(request.params);
    checkId(register, request.params.id);
    await getWorkspace(services.database.db, workspaceId);
    const doc = await services.records.getDoc(workspaceId, register, request.params.id);
    if (doc === undefined) throw new AppError('not_found', `No ${register.resource} ${request.params.id} in workspace ${workspaceId}.`);
    const updatedAt = (JSON.parse(doc) as { updated_at: string }).updated_at;
    return reply.header('ETag', etagOf(updatedAt)).type(JSON_TYPE).send(doc);
  });

  app.put<{ Params: RecordParams }>(path, { onRequest, bodyLimit: RECORD_BODY_LIMIT }, async (request, reply) => {
    const register = registerNamed(request.params.register);
    const result = await putRecord(
      services,
      workspaceOf(request.params),
      register,
      request.params.id,
      request.body,
      preconditions(request),
    );
    return sendRecord(reply, result, result.created ? 201 : 200);
  });

  app.patch<{ Params: RecordParams }>(path, { onRequest, bodyLimit: RECORD_BODY_LIMIT }, async (request, reply) => {
    const register = registerNamed(request.params.register);
    const result = await patchRecord(
      services,
      workspaceOf(request.params),
      register,
      request.params.id,
      request.body,
      preconditions(request),
    );
    return sendRecord(reply, result, 200);
  });

  app.delete<{ Params: RecordParams }>(path, { onRequest }, async (request, reply) => {
    const register = registerNamed(request.params.register);
    await deleteOne(services, workspaceOf(request.params), register, request.params.id, preconditions(request));
    return reply.code(204).send();
  });

  app.post<{ Params: { workspace_id: string } }>('/internal/v1/workspaces/:workspace_id/import', { onRequest }, async (request, reply) => {
    const workspaceId = workspaceOf(request.params);
    const q = queryOf(request.query, ['atomic', 'dry_run', 'keep_timestamps']);
    const body = request.body as NodeJS.ReadableStream | undefined;
    const encoding = request.headers['content-encoding'];
    if (!body || typeof (body as { pipe?: unknown }).pipe !== 'function' || (encoding && encoding !== 'identity')) {
      throw new AppError(
        'unsupported_media_type',
        `Send the operations as ${NDJSON_TYPE}, one JSON operation a line, without a content encoding.`,
      );
    }
    const report = await importRecords(services, workspaceId, body as AsyncIterable<Buffer>, {
      actor: 'operator',
      atomic: q.atomic === true,
      dryRun: q.dry_run === true,
      keepTimestamps: q.keep_timestamps === true,
    });
    return reply.type(JSON_TYPE).send(JSON.stringify(report));
  });

  app.get<{ Params: { workspace_id: string } }>('/internal/v1/workspaces/:workspace_id/export', { onRequest }, async (request, reply) => {
    const workspaceId = workspaceOf(request.params);
    const q = queryOf(request.query, [], ['registers']);
    const registers = exportRegistersParam(typeof q.registers === 'string' ? q.registers : undefined);
    await getWorkspace(services.database.db, workspaceId);
    return reply.type(NDJSON_TYPE).send(Readable.from(exportRecords(services, workspaceId, registers), { objectMode: false }));
  });
}
