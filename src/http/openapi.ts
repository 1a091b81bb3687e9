// The OpenAPI 3.1 document, generated from the route schemas, at /v1/openapi.json; a readable page at /docs.
import { readFileSync } from 'node:fs';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { projectPath } from '../lib/project-dir.ts';
import { finishDocument } from './openapi-document.ts';

/** package.json's version: the document's `info.version`, and the CHANGELOG's (one number for all three). */
export const PACKAGE_VERSION: string = JSON.parse(readFileSync(projectPath('package.json'), 'utf8')).version;

export const TAGS = [
  { name: 'Account', description: 'The organization an API key belongs to: plan, trial, time zone.' },
  {
    name: 'Contacts',
    description: 'People the organization talks to: create, read, update, delete, and list with filters and sorts.',
  },
  { name: 'Custom properties', description: 'Typed fields of the organization, filled per contact.' },
  {
    name: 'Funnel stages',
    description: 'The ordered stages a contact moves through; one is where new contacts start.',
  },
  { name: 'Sub-origins', description: 'Named sources of contacts inside an origin category.' },
  { name: 'Templates', description: 'Message templates: created here, reviewed by the messaging platform, then sent.' },
  { name: 'Channels', description: 'The connected messaging numbers sends go out from.' },
  {
    name: 'Broadcasts',
    description: 'A send of one template to up to 100 recipients, and how far it got; cancel what is left.',
  },
  { name: 'Conversations', description: 'Messages exchanged with contacts, one conversation per contact and number.' },
  { name: 'Teams', description: 'decisions §19: people who work conversations together, with auto-assignment.' },
  {
    name: 'Webhook endpoints',
    description: 'Where the organization’s events are delivered (Standard Webhooks), and the log of each delivery.',
  },
  {
    name: 'Automation',
    description:
      'Business hours with an away message, and rules run on every contact message (decisions §20): conditions, ' +
      'actions in order, and each rule’s runs.',
  },
  {
    name: 'AI assistant',
    description:
      'An assistant that answers contacts from the organization’s FAQs and instructions through any ' +
      'OpenAI-compatible model, drafts replies, and hands off to a person (decisions §20).',
  },
  {
    name: 'Console',
    description:
      'The console’s own API under `/app/api` (decisions §17), authenticated by the `crm_session` cookie instead of ' +
      'a key: sessions, users, API keys and the live event stream. Every /v1 operation also answers under ' +
      '`/app/api` (e.g. `GET /app/api/v1/contacts`) with the same schemas, under the organization’s rate budget. ' +
      'A change (any method but GET and HEAD) needs `X-CSRF-Token` equal to the `crm_csrf` cookie and a ' +
      'same-origin `Origin` (403 `csrf_failed`); agents may use conversations and contacts and read templates, ' +
      'anything else answers them 403 `forbidden_for_role`.',
  },
  {
    name: 'Webhook events',
    description:
      'The events sent to webhook endpoints (the `webhooks` section): the body and headers of each delivery.',
  },
];

function listenAddress(app: FastifyInstance): string | undefined {
  const address = app.addresses()[0];
  if (!address || typeof address === 'string') return undefined;
  const host = ['0.0.0.0', '::'].includes(address.address)
    ? 'localhost'
    : address.family === 'IPv6'
      ? `[${address.address}]`
      : address.address;
  return `http://${host}:${address.port}`;
}

export interface OpenApiOptions {
  /** PUBLIC_BASE_URL: the address clients reach; the listen address when absent. */
  publicBaseUrl?: string | undefined;
  /** The OpenAPI 3.1 `webhooks` section describing the events sent to API clients (decisions §11). */
  webhooks?: Record<string, unknown>;
}

export async function registerOpenApi(app: FastifyInstance, options: OpenApiOptions = {}): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'CRM and Messaging API',
        version: PACKAGE_VERSION,
        license: { name: 'MIT', identifier: 'MIT' },
        description: [
          'A multi-tenant CRM with a chat-messaging channel. Every request carries `Authorization: Bearer oak_…`,',
          'an API key bound to one organization. Errors are `{"detail": …}` where `detail` is a string code, an',
          'object with a stable `code`, or (422) an array of `{loc, msg, type, input?, ctx?}`; each response lists',
          'its codes in `x-detail-codes`. Every /v1 response carries `X-RateLimit-Limit`, `X-RateLimit-Remaining`,',
          '`X-RateLimit-Reset` and `X-Request-Id`. String enums of responses may gain values: they are written as',
          '`anyOf` of the known values and any string.',
        ].join(' '),
      },
      servers: [{ url: options.publicBaseUrl ?? '/', description: 'This server.' }],
      tags: TAGS,
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'An `oak_` API key.' },
          consoleSession: {
            type: 'apiKey',
            in: 'cookie',
            name: 'crm_session',
            description: 'A console session (decisions §17), set by signing in; only under `/app/api`.',
          },
        },
      },
      security: [{ apiKey: [] }],
      ...(options.webhooks ? { webhooks: options.webhooks } : {}),
    },
    transformObject: (built) => finishDocument((built as { openapiObject: unknown }).openapiObject),
  });
  if (!options.publicBaseUrl) {
    // The document is built once; the real base address is known only once the server listens.
    app.addHook('onListen', async () => {
      const url = listenAddress(app);
      if (url) (app.swagger() as { servers?: unknown }).servers = [{ url, description: 'This server.' }];
    });
  }
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
}
