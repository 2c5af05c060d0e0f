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

/** Records every route declared on `app` from now on; the function answers a path's methods (none: no such path). */
export function learnAllowedMethods(app: FastifyInstance): (path: string) => string[] {
  const routes: { pattern: RegExp; methods: string[] }[] = [];
  app.addHook('onRoute', (route) => {
    routes.push({ pattern: patternOf(route.url), methods: [route.method].flat().map(String) });
  });
  const order = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
  return (path) => {
    const methods = new Set(routes.filter((r) => r.pattern.test(path)).flatMap((r) => r.methods));
    return [...methods].sort((a, b) => order.indexOf(a) - order.indexOf(b));
  };
}
