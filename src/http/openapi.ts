// The OpenAPI 3.1 document, generated from the route schemas, at /v1/openapi.json; a readable page at /docs.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

/** `webhooks`: the OpenAPI 3.1 section describing the events sent to API clients (decisions §11). */
export async function registerOpenApi(
  app: FastifyInstance,
  version: string,
  extra: { webhooks?: Record<string, unknown> } = {},
): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'CRM and Messaging API',
        version,
        description: [
          'A multi-tenant CRM with a chat-messaging channel. Every request carries `Authorization: Bearer oak_…`,',
          'an API key bound to one organization. Errors are `{"detail": …}` where `detail` is a string code, an',
          'object with a stable `code`, or (422) an array of `{loc, msg, type, input?, ctx?}`.',
          'Every /v1 response carries `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` and `X-Request-Id`.',
        ].join(' '),
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'An `oak_` API key.' } },
      },
      security: [{ apiKey: [] }],
      ...(extra.webhooks ? { webhooks: extra.webhooks } : {}),
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
}
