/**
 * Both listeners refuse a request body with a key that names an object's prototype (the rule:
 * text-rules.ts), before any handler reads it. Fastify's JSON parser refuses `__proto__` and
 * `constructor.prototype` itself (the options below, stated so that no one turns them off, and
 * used by every scope that adds a JSON media type through getDefaultJsonParser); the hook covers
 * what that parser lets through (other letter cases, a lone `constructor` or `prototype`) and
 * every other parser: forms, multipart fields, custom media types. The answer is a 400 in the
 * surface's own error shape, made by each scope's error handler.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { prototypeKeyIn } from '../text-rules.js';

/** Fastify's options for its JSON parser: a `__proto__` or `constructor.prototype` key is a 400. */
export const JSON_POISONING_REFUSED = { onProtoPoisoning: 'error', onConstructorPoisoning: 'error' } as const;

/** A client error as Fastify raises its own: every listener's error handler answers it as a 400 in its shape. */
function badRequest(detail: string): Error {
  return Object.assign(new Error(detail), { statusCode: 400 });
}

/**
 * Refuses, on every route of `app` and its scopes, a body with a key naming the prototype.
 * `refusal` makes the error for a surface whose handler wants its own kind (SCIM's invalidSyntax).
 * Call it before any route or scope is added.
 */
export function refusePrototypeKeys(
  app: FastifyInstance,
  refusal: (detail: string, request: FastifyRequest) => Error | undefined = () => undefined,
): void {
  // preHandler rather than preValidation: it runs after every scope's body parsing (multipart
  // fills the body in a preValidation hook of its own). A callback hook, as no promise is needed.
  app.addHook('preHandler', (request, _reply, done) => {
    const body = request.body;
    if (typeof body !== 'object' || body === null) return done();
    const pointer = prototypeKeyIn(body);
    if (pointer === undefined) return done();
    const detail = `The body has a key at ${pointer.slice(0, 200)} naming __proto__, constructor or prototype, which is never accepted (in any letter case); nothing was changed.`;
    done(refusal(detail, request) ?? badRequest(detail));
  });
}
