// The shared isolation and bad-input suite (decisions §3), beside route-auth.test.ts and driven by the same
// OpenAPI document: every by-id route answers 404 to another organization's id and changes nothing, and every body
// route answers malformed JSON, wrong types and unknown fields with the contract's 422, never a 5xx.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { fillPath, type Operation, operationsOf, wrongTypeFor } from '../../helpers/openapi-operations.ts';
import { createOwnedResources, type OwnedResources } from '../../helpers/owned-resources.ts';

let h: Harness;
let operations: Operation[] = [];
let owner: OwnedResources;
let intruderKey: string;

// Bodies that pass validation, so that the answer is decided by the id (a new body route needs an entry).
const validBodies: Record<string, unknown> = {
  sendTemplate: { recipients: [{ phone: '+15550109999', variables: { 'body.1': '1' } }] },
  updateContact: { city: 'Intruded' },
  updateProperty: { label: 'Intruded' },
  updateFunnelStage: { name: 'Intruded' },
  replyToConversation: { type: 'text', text: 'Intruded' },
  updateConversation: { priority: 'urgent' },
  createConversationNote: { text: 'Intruded' },
  updateTeam: { name: 'Intruded' },
  updateCannedResponse: { text: 'Intruded' },
};

beforeAll(async () => {
  h = await startHarness({ unlimited: true });
  operations = operationsOf(h.app.swagger());
  owner = await createOwnedResources(h);
  intruderKey = (await h.createOrg()).key;
});
afterAll(() => h.close());

const ownerId = (name: string): string => {
  const id = owner.ids[name];
  if (!id) throw new Error(`no fixture id for path parameter {${name}}: add one to route-isolation.test.ts`);
  return id;
};

/** Everything the owner can read by id, to show that the intruder's requests changed nothing. */
async function snapshot() {
  const reads = operations.filter((operation) => operation.method === 'GET' && operation.pathParams.length > 0);
  const bodies: Record<string, unknown> = {};
  for (const operation of reads) {
    const url = fillPath(operation, ownerId);
    const response = await h.api('GET', url, { key: owner.key });
    expect(response.status, url).toBe(200);
    bodies[url] = response.body;
  }
  bodies.contacts = (await h.api('GET', '/v1/contacts', { key: owner.key })).body;
  bodies.broadcasts = (await h.api('GET', '/v1/broadcasts', { key: owner.key })).body;
  return bodies;
}

describe('isolation: every by-id route', () => {
  it('has fixtures for every path parameter (the suite is not empty)', () => {
    const byId = operations.filter((operation) => operation.pathParams.length > 0);
    expect(byId.length).toBeGreaterThan(10);
    for (const operation of byId) for (const name of operation.pathParams) expect(ownerId(name)).toBeTruthy();
  });

  it("answers 404 not_found to another organization's id and changes nothing", async () => {
    const before = await snapshot();
    for (const operation of operations.filter((candidate) => candidate.pathParams.length > 0)) {
      const url = fillPath(operation, ownerId);
      const label = `${operation.method} ${url}`;
      const body = operation.body ? (validBodies[operation.operationId] ?? {}) : undefined;
      const response = await h.api(operation.method, url, {
        key: intruderKey,
        ...(body !== undefined ? { body } : {}),
      });
      expect(response.status, label).toBe(404);
      expect(response.body, label).toEqual({ detail: 'not_found' });
    }
    expect(await snapshot()).toEqual(before);
  });
});

describe('bad input: every body route', () => {
  const bodyOperations = () => operations.filter((operation) => operation.body);
  // A body the document leaves untyped (cancel's: not read) accepts any JSON value: only malformed JSON is refused.
  const typedBodyOperations = () =>
    bodyOperations().filter((operation) => (operation.body as Record<string, unknown>).type !== undefined);
  // D224: a send and a reply check their template or conversation before the body (decisions §7, §15): their
  // bodies are judged on the owner's own resource; every other route's on an id from nowhere.
  const CHECKED_IN_ORDER = new Set(['sendTemplate', 'replyToConversation']);
  const urlOf = (operation: Operation) =>
    fillPath(operation, CHECKED_IN_ORDER.has(operation.operationId) ? ownerId : () => 'id_from_nowhere');

  it('is listed', () => {
    expect(bodyOperations().length).toBeGreaterThan(5);
  });

  it('answers malformed JSON with one json_invalid issue', async () => {
    for (const operation of bodyOperations()) {
      for (const raw of ['{"a":', '{a:1}', '[1,]', '{"a":1}}', '\u0000', '"unterminated']) {
        const response = await h.api(operation.method, urlOf(operation), {
          key: owner.key,
          rawBody: raw,
          headers: { 'content-type': 'application/json' },
        });
        const label = `${operation.method} ${operation.path} ${JSON.stringify(raw)}`;
        expect(response.status, label).toBe(422);
        expect(response.body.detail, label).toEqual([expect.objectContaining({ loc: ['body'], type: 'json_invalid' })]);
      }
    }
  });

  it('answers a body of the wrong type, and a field of the wrong type, with a 422 at that place', async () => {
    // A body the document marks as not read (cancel) accepts any JSON value.
    for (const operation of typedBodyOperations()) {
      const schema = operation.body ?? {};
      for (const wrong of [[], 'text', 42, null]) {
        const response = await h.api(operation.method, urlOf(operation), { key: owner.key, body: wrong });
        const label = `${operation.method} ${operation.path} ${JSON.stringify(wrong)}`;
        expect(response.status, label).toBe(422);
        expect(response.body.detail[0].loc[0], label).toBe('body');
      }
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        const value = wrongTypeFor(property);
        if (value === undefined) continue;
        const response = await h.api(operation.method, urlOf(operation), { key: owner.key, body: { [name]: value } });
        const label = `${operation.method} ${operation.path} ${name}=${JSON.stringify(value)}`;
        expect(response.status, label).toBe(422);
        const locs = (response.body.detail as { loc: unknown[] }[]).map((issue) => issue.loc.slice(0, 2).join('.'));
        expect(locs, label).toContain(`body.${name}`);
      }
    }
  });

  it('answers an unknown field with extra_forbidden at its place', async () => {
    for (const operation of typedBodyOperations()) {
      const response = await h.api(operation.method, urlOf(operation), {
        key: owner.key,
        body: { unknown_field_xyz: 1 },
      });
      const label = `${operation.method} ${operation.path}`;
      expect(response.status, label).toBe(422);
      expect(response.body.detail, label).toContainEqual(
        expect.objectContaining({ loc: ['body', 'unknown_field_xyz'], type: 'extra_forbidden' }),
      );
    }
  });
});
