/**
 * The methods each path of a listener is served with, learnt from its routes as they are
 * declared: a request for a path that exists under other methods is a 405 with `Allow`, not
 * a 404 that would say the path does not exist.
 */
import type { FastifyInstance } from 'fastify';

/** `/a/:id/*` -> a pattern for one concrete path: a parameter is one segment, `*` the rest. */
function patternOf(url: string): RegExp {
  const source = url
    .split(/(:[A-Za-z0-9_]+|\*)/)
    .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`);
}

export interface AllowedMethods {
  /** The methods a path is served with (none: no such path). */
  on(path: string): string[];
  /** Whether any route of the listener is declared with this method. */
  declares(method: string): boolean;
}

/** Records every route declared on `app` from now on. */
export function learnAllowedMethods(app: FastifyInstance): AllowedMethods {
  const routes: { pattern: RegExp; methods: string[] }[] = [];
  const declared = new Set<string>();
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat().map(String);
    routes.push({ pattern: patternOf(route.url), methods });
    for (const m of methods) declared.add(m);
  });
  const order = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
  return {
    on(path) {
      const methods = new Set(routes.filter((r) => r.pattern.test(path)).flatMap((r) => r.methods));
      return [...methods].sort((a, b) => order.indexOf(a) - order.indexOf(b));
    },
    declares: (method) => declared.has(method),
  };
}
