// The OpenAPI document is one generators can use (D14–D17): named components, detail codes, headers, examples that
// validate and work, tags, the version, the base address, and parameters as the API really takes them.
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.ts';
import { seedDemo } from '../../../src/demo.ts';
import { createMemoryRateLimitStore } from '../../../src/http/rate-limit.ts';
import { addCountryFormat } from '../../../src/http/validation.ts';
import { systemClock } from '../../../src/lib/clock.ts';
import { wire } from '../../../src/wiring.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { waitUntil } from '../../helpers/wait.ts';

type Json = any;

let h: Harness;
let document: Json;
beforeAll(async () => {
  h = await startHarness({ unlimited: true, sandbox: { autoReviewMs: 30 } });
  document = (await h.api('GET', '/v1/openapi.json')).body;
});
afterAll(() => h.close());

const operations = () =>
  Object.entries(document.paths as Record<string, Record<string, Json>>).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ path, method, operation, name: `${method} ${path}` })),
  );

function schemaValidator() {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (instance: Ajv2020) => void)(ajv);
  addCountryFormat(ajv);
  ajv.addSchema({ $id: 'doc', components: document.components }, 'doc');
  return (schema: Json, value: unknown) => {
    const rooted = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/'));
    const validate = ajv.compile(rooted);
    return validate(value) ? undefined : ajv.errorsText(validate.errors);
  };
}

describe('components', () => {
  it('names every resource and error shape, and paths only reference them', () => {
    const names = Object.keys(document.components.schemas);
    for (const name of [
      'Contact',
      'Broadcast',
      'Template',
      'Error',
      'ValidationIssue',
      'ContactInput',
      'SendRequest',
    ]) {
      expect(names).toContain(name);
    }
    const inline: string[] = [];
    for (const { name, operation } of operations()) {
      const media = [
        operation.requestBody?.content?.['application/json'],
        ...Object.values<Json>(operation.responses).map((response) => response.content?.['application/json']),
      ].filter(Boolean);
      for (const { schema } of media) if (schema.properties || schema.type === 'object') inline.push(name);
    }
    expect(inline).toEqual([]);
    // Contact was inlined 8 times: now it is defined once and referenced by create, read, update and the page.
    const contactRefs = JSON.stringify(document).match(/"\$ref":"#\/components\/schemas\/Contact"/g);
    // ... by each item of the batch upsert's answer, and by the data of the contact.created and contact.updated
    // events (the webhooks section).
    expect(contactRefs?.length).toBe(4 + 1 + 2);
    for (const event of ['ContactCreatedEvent', 'ContactUpdatedEvent']) {
      expect(document.components.schemas[event].properties.data).toEqual({ $ref: '#/components/schemas/Contact' });
    }
  });

  it('marks response enums open to new values, and keeps request enums closed', () => {
    const contact = document.components.schemas.Contact.properties;
    expect(contact.messaging_status.anyOf).toContainEqual({ type: 'string', description: 'A value added later.' });
    expect(document.components.schemas.Broadcast.properties.status.anyOf[0].enum).toContain('cancelled');
    expect(document.components.schemas.SubOriginInput.properties.origin.enum).toContain('API');
  });
});

describe('operations', () => {
  it('have a description, a tag that is declared with a description, and described responses', () => {
    const tags = new Map((document.tags as { name: string; description: string }[]).map((t) => [t.name, t]));
    for (const { name, operation } of operations()) {
      expect(operation.description, name).toBeTruthy();
      expect(operation.operationId, name).toBeTruthy();
      for (const tag of operation.tags) expect(tags.get(tag)?.description, `${name} tag ${tag}`).toBeTruthy();
      for (const [status, response] of Object.entries<Json>(operation.responses)) {
        expect(response.description, `${name} ${status}`).toBeTruthy();
        expect(response.description, `${name} ${status}`).not.toBe('Default Response');
      }
    }
  });

  it('declare the response headers, Retry-After on 429 and Idempotent-Replayed on the send', () => {
    for (const { name, operation } of operations()) {
      for (const [status, response] of Object.entries<Json>(operation.responses)) {
        const headers = Object.keys(response.headers ?? {});
        for (const header of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-Request-Id']) {
          expect(headers, `${name} ${status}`).toContain(header);
        }
        if (status === '429' || status === '503') expect(headers, `${name} ${status}`).toContain('Retry-After');
      }
    }
    const send = document.paths['/v1/templates/{template_id}/send'].post;
    expect(Object.keys(send.responses['202'].headers)).toContain('Idempotent-Replayed');
    expect(document.components.headers['X-Request-Id'].required).toBe(true);
  });

  it('list the detail codes of every error status, each with an example', () => {
    const validate = schemaValidator();
    for (const { name, operation } of operations()) {
      for (const [status, response] of Object.entries<Json>(operation.responses)) {
        if (Number(status) < 400) continue;
        const codes: string[] = response['x-detail-codes'];
        expect(codes?.length, `${name} ${status}`).toBeGreaterThan(0);
        const media = response.content['application/json'];
        expect(Object.keys(media.examples), `${name} ${status}`).toEqual(codes);
        for (const example of Object.values<Json>(media.examples)) {
          expect(validate(media.schema, example.value), `${name} ${status}`).toBeUndefined();
        }
      }
    }
    const send = document.paths['/v1/templates/{template_id}/send'].post.responses;
    expect(send['400']['x-detail-codes']).toEqual(['bad_request', 'invalid_channel', 'channel_id_required']);
    expect(document.paths['/v1/me'].get.responses['403']['x-detail-codes']).toContain('trial_expired');
  });

  it('give every request body and success response an example that matches its schema', () => {
    const validate = schemaValidator();
    let checked = 0;
    for (const { name, operation } of operations()) {
      const media = [
        ['request', operation.requestBody?.content?.['application/json']],
        ...Object.entries<Json>(operation.responses)
          .filter(([status]) => Number(status) < 400 && status !== '204')
          .map(([status, response]) => [status, response.content?.['application/json']]),
      ] as [string, Json][];
      for (const [where, content] of media) {
        if (!content) continue;
        expect(content.example, `${name} ${where}`).not.toBeUndefined();
        expect(validate(content.schema, content.example), `${name} ${where}`).toBeUndefined();
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(40);
  });

  it('list 413 and 415 on every operation with a body, and say that cancel needs none', () => {
    for (const { name, operation } of operations()) {
      if (!operation.requestBody) continue;
      expect(Object.keys(operation.responses), name).toEqual(expect.arrayContaining(['413', '415']));
    }
    expect(document.paths['/v1/broadcasts/{broadcast_id}/cancel'].post.requestBody.required).toBe(false);
    expect(document.paths['/v1/contacts'].post.requestBody.required).toBe(true);
  });

  it('mark defaulted parameters optional and array parameters as repeated or comma-separated', () => {
    const parameters = document.paths['/v1/contacts'].get.parameters as Json[];
    const byName = (name: string) => parameters.find((parameter) => parameter.name === name);
    expect(byName('limit').required).toBe(false);
    expect(byName('sort').required).toBe(false);
    const origin = byName('origin');
    expect(origin).toMatchObject({ style: 'form', explode: true });
    const comma = origin.schema.items.anyOf[1];
    expect(new RegExp(comma.pattern).test('API,WEB')).toBe(true);
    expect(new RegExp(comma.pattern).test('API,NOPE')).toBe(false);
  });
});

describe('info and servers', () => {
  it('carry the package and changelog version', () => {
    const version = JSON.parse(readFileSync('package.json', 'utf8')).version;
    expect(document.info.version).toBe(version);
    // The latest released section of the changelog names the version the package and the document carry.
    const released = /^## .*?(\d+\.\d+\.\d+)/m.exec(readFileSync('CHANGELOG.md', 'utf8'));
    expect(released?.[1]).toBe(version);
  });

  it('name PUBLIC_BASE_URL, or else the listen address', async () => {
    const configured = await buildApp(
      wire({
        database: h.database,
        rateLimitStore: createMemoryRateLimitStore(),
        publicBaseUrl: 'https://api.example.com',
      }),
    );
    const listening = await buildApp(
      wire({
        database: h.database,
        rateLimitStore: createMemoryRateLimitStore(),
      }),
    );
    try {
      const fromConfig = await configured.inject('/v1/openapi.json');
      expect(fromConfig.json().servers).toEqual([{ url: 'https://api.example.com', description: 'This server.' }]);
      await listening.listen({ host: '127.0.0.1', port: 0 });
      const address = listening.server.address() as { port: number };
      const served = await fetch(`http://127.0.0.1:${address.port}/v1/openapi.json`);
      expect(((await served.json()) as Json).servers).toEqual([
        { url: `http://127.0.0.1:${address.port}`, description: 'This server.' },
      ]);
    } finally {
      await configured.close();
      await listening.close();
    }
  });
});

describe('the documented send example', () => {
  it('succeeds against the demo organization as it is, after the documented template example', async () => {
    const demo = await seedDemo({ db: h.database.db, now: () => systemClock.now(), ...h.wiring.services });
    expect(demo).toBeDefined();
    const key = demo?.apiKey as string;
    const templateExample = document.paths['/v1/templates'].post.requestBody.content['application/json'].example;
    const template = await h.api('POST', '/v1/templates', { key, body: templateExample });
    expect(template.status).toBe(201);
    await waitUntil(
      async () => (await h.api('GET', `/v1/templates/${template.body.id}`, { key })).body.status === 'APPROVED',
      { message: 'the demo template approved' },
    );
    const sendExample =
      document.paths['/v1/templates/{template_id}/send'].post.requestBody.content['application/json'].example;
    const sent = await h.api('POST', `/v1/templates/${template.body.id}/send`, { key, body: sendExample });
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({ requested: 1, origin: 'API', status: 'in_progress' });
    // The documented contact example works too, on the same organization.
    const contactExample = document.paths['/v1/contacts'].post.requestBody.content['application/json'].example;
    expect((await h.api('POST', '/v1/contacts', { key, body: contactExample })).status).toBe(201);
  });
});
