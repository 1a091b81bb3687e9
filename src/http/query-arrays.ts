// Array-valued query parameters arrive as repeated keys (`?country=US&country=MX`) or one comma-separated value
// (`?country=US,MX`); both become one array before validation (decisions §2).
import type { FastifyInstance, RouteOptions } from 'fastify';

function arrayParams(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { type?: string }> } | undefined)?.properties ?? {};
  return Object.entries(properties)
    .filter(([, property]) => property?.type === 'array')
    .map(([name]) => name);
}

export function registerQueryArrays(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const names = arrayParams(route.schema?.querystring);
    if (names.length === 0) return;
    const split = async (request: { query: unknown }) => {
      const query = request.query as Record<string, unknown>;
      for (const name of names) {
        const value = query[name];
        if (value === undefined) continue;
        const values = (Array.isArray(value) ? value : [value]).flatMap((item) =>
          typeof item === 'string' ? item.split(',') : [item],
        );
        query[name] = values
          .map((item) => (typeof item === 'string' ? item.trim() : item))
          .filter((item) => item !== '');
      }
    };
    const existing = route.preValidation;
    route.preValidation = existing ? [...(Array.isArray(existing) ? existing : [existing]), split] : [split];
  });
}
