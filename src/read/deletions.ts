/**
 * The deletions feed, `GET /api/v1/{register}/deletions`: the register's tombstones (`id`,
 * `deleted_at`) in ascending `(deleted_at, id)`, paged and synced by the lists' rules: the same
 * key and scope, `limit`, a signed cursor (bound to this feed: a list's cursor is refused here
 * and this feed's on the list), and `since` (strictly after, the format of `updated_since`).
 * Tombstones are kept for `WSOPS_DELETION_RETENTION_DAYS`; a walk whose `since` lies before
 * that horizon could miss pruned ones, so it is refused and the consumer walks the list in full.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import { type KeyContext, requireScope } from '../keys/auth.js';
import { JSON_TYPE } from '../media-types.js';
import type { Register } from '../registers/define.js';
import type { Database } from '../store/database.js';
import { tombstonePage } from '../store/tombstones.js';
import type { CursorCodec } from './list-query.js';
import { filterDigest, type RawQuery, readCursor, readInstant, readLimit, rejectUnknown } from './list-query.js';

/** What this file takes of the services built at start (services.ts). */
export interface DeletionsServices {
  config: Config;
  database: Database;
  cursors: CursorCodec;
  clock: Clock;
}

const DAY_MS = 86_400_000;
export const DELETIONS_PARAMS: readonly string[] = ['limit', 'cursor', 'since'];

/** The register name a feed's cursors are bound to: never the list's, so neither accepts the other's. */
export const feedOf = (register: Register): string => `${register.path}/deletions`;

/** The oldest `since` the feed still answers completely, given the retention setting. */
export function retentionHorizon(services: DeletionsServices, now: number): string {
  return new Date(now - services.config.deletionRetentionDays * DAY_MS).toISOString();
}

export function deletionsHandler(
  services: DeletionsServices,
  register: Register,
  admit: (request: FastifyRequest, reply: FastifyReply) => Promise<KeyContext>,
) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const ctx = await admit(request, reply);
    requireScope(ctx, register.scope);
    const query = request.query as RawQuery;
    rejectUnknown(query, DELETIONS_PARAMS);
    const limit = readLimit(query);
    const since = readInstant(query, 'since');
    const cursor = readCursor(query);
    const now = services.clock();
    const digest = filterDigest({ since });
    const after = cursor
      ? services.cursors.decode(cursor, { workspaceId: ctx.workspaceId, register: feedOf(register), digest, now, resumeWith: 'since' })
      : undefined;
    // Checked on every page: a walk's `since` comes back with each cursor, and a walk that falls
    // behind the horizon while it pages may already have lost tombstones to pruning.
    const horizon = retentionHorizon(services, now);
    if (since !== undefined && since < horizon) {
      throw new AppError(
        'deletions_beyond_retention',
        `since ${since} is before the deletions feed's retention horizon ${horizon} (tombstones are kept ${services.config.deletionRetentionDays} days), so deletions from then may be missing: walk /api/v1/${register.path} in full without updated_since and drop the records it did not return, then follow this feed without since`,
        { param: 'since' },
      );
    }
    if (!ctx.modules.has(register.module)) {
      return reply.type(JSON_TYPE).send('{"data":[],"has_more":false,"next_cursor":null}');
    }
    const page = await tombstonePage(services.database.db, {
      workspaceId: ctx.workspaceId,
      register: register.path,
      since,
      notBefore: horizon,
      after: after && { deletedAt: after.updatedAt, id: after.id },
      limit,
    });
    const nextCursor = page.next
      ? services.cursors.encode({
          workspaceId: ctx.workspaceId,
          register: feedOf(register),
          position: { updatedAt: page.next.deletedAt, id: page.next.id },
          digest,
          issuedAt: now,
        })
      : null;
    return reply.type(JSON_TYPE).send(JSON.stringify({ data: page.data, has_more: page.next !== undefined, next_cursor: nextCursor }));
  };
}
