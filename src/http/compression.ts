/**
 * Compression of /api/v1 responses, as the client asks in `Accept-Encoding`. Every /api/v1
 * response says `Vary: Accept-Encoding` (200s, errors, small bodies alike) so a cache never
 * hands one client's representation to another. A client that asks for nothing gets exactly
 * the bytes the handler sent; otherwise only Content-Encoding and Content-Length change.
 */
import type { FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import { negotiateEncoding } from './accept-encoding.js';
import { AVAILABLE_CODINGS, compressResponse, MIN_COMPRESSED_BYTES } from './content-codings.js';
import { pathUnder } from './paths.js';

/** `/api/v1` itself, or anything under it (path or query). */
const isApiRequest = (url: string) => pathUnder(url, '/api/v1');

/** Adds Accept-Encoding to Vary, keeping whatever Vary already names. */
function varyOnAcceptEncoding(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  if (vary === undefined) {
    reply.header('vary', 'Accept-Encoding');
    return;
  }
  const names = String(vary).toLowerCase();
  if (!/(^|,)\s*(accept-encoding|\*)\s*(,|$)/.test(names)) reply.header('vary', `${vary}, Accept-Encoding`);
}

/**
 * Vary for an answer that bypasses the hooks: Fastify's frameworkErrors (a malformed URL, an
 * over-long path segment) run on a context without them. Their small problem bodies are not
 * worth compressing.
 */
export function varyApiResponse(request: FastifyRequest, reply: FastifyReply): void {
  if (isApiRequest(request.url)) varyOnAcceptEncoding(reply);
}

function bodyBytes(payload: string | Buffer): number {
  return typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
}

/**
 * The onSend hook (callback form: no promise per request). A compression failure is logged
 * and the body goes out uncompressed: never a 500 for it.
 */
export const compressApiResponses: onSendHookHandler<unknown> = (request: FastifyRequest, reply: FastifyReply, payload, done) => {
  if (!isApiRequest(request.url)) return done(null, payload);
  varyOnAcceptEncoding(reply);
  // null/undefined: a body-less answer (304, 204); a stream: not something the API sends.
  if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return done(null, payload);
  if (reply.hasHeader('content-encoding')) return done(null, payload);
  const coding = negotiateEncoding(request.headers['accept-encoding'], AVAILABLE_CODINGS);
  if (coding === 'identity' || bodyBytes(payload) < MIN_COMPRESSED_BYTES) return done(null, payload);
  let compressed: Buffer;
  try {
    compressed = compressResponse(coding, payload);
  } catch (err) {
    request.log.warn({ err, coding }, 'compression failed; sending the body uncompressed');
    return done(null, payload);
  }
  reply.header('content-encoding', coding);
  // Fastify sets Content-Length from the payload it is given; a length set by a handler would be stale.
  reply.removeHeader('content-length');
  done(null, compressed);
};
