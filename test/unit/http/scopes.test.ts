// decisions §18: the scope table's rules, and a /v1 route the table does not name stopping the server at startup.
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { grants, scopeFromTable } from '../../../src/http/scopes.ts';

describe('grants', () => {
  it('grants everything to *, a scope to itself, a :read to its :write, nothing else', () => {
    expect(grants(['*'], 'webhooks:write')).toBe(true);
    expect(grants(['contacts:read'], 'contacts:read')).toBe(true);
    expect(grants(['contacts:write'], 'contacts:read')).toBe(true);
    expect(grants(['contacts:read'], 'contacts:write')).toBe(false);
    expect(grants(['templates:write'], 'contacts:read')).toBe(false);
    expect(grants([], 'account:read')).toBe(false);
  });
});

describe('scopeFromTable', () => {
  it('gives a route its scope from the table', async () => {
    const app = Fastify();
    app.addHook('onRoute', scopeFromTable);
    app.get('/contacts', { schema: { operationId: 'listContacts' } }, async (request) => ({
      scope: request.routeOptions.config.scope,
    }));
    expect((await app.inject({ method: 'GET', url: '/contacts' })).json()).toEqual({ scope: 'contacts:read' });
    await app.close();
  });

  it('refuses a route the table does not name, or without an operationId, when it is registered', async () => {
    const app = Fastify();
    app.addHook('onRoute', scopeFromTable);
    expect(() => app.get('/new-thing', { schema: { operationId: 'listNewThings' } }, async () => ({}))).toThrow(
      /GET \/new-thing \(operationId listNewThings\) has no scope/,
    );
    expect(() => app.post('/other', async () => ({}))).toThrow(/operationId missing/);
    // A public route (the OpenAPI document) needs none.
    app.get('/openapi.json', { config: { public: true } }, async () => ({}));
    await app.close();
  });
});
