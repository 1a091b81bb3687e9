// The SDK's committed types (`sdk/src/openapi.ts`) must be what openapi-typescript makes of the document the app
// serves, and its table of operations (`sdk/src/operations.ts`) the document's: a route or a schema that changed
// without `npm run sdk:generate` fails here.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openapiTypes, operationsModule } from '../../sdk/scripts/openapi-types.ts';
import { SCOPES } from '../../src/http/scopes.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

it('sdk/src/openapi.ts is generated from the served document (run `npm run sdk:generate` when this fails)', async () => {
  const served = await h.app.inject({ method: 'GET', url: '/v1/openapi.json' });
  expect(served.statusCode).toBe(200);
  const committed = readFileSync(new URL('../../sdk/src/openapi.ts', import.meta.url), 'utf8');
  const fresh = await openapiTypes(served.json());
  // A plain equality: a diff of 7,000 lines helps nobody, the script fixes it.
  expect(fresh === committed, 'sdk/src/openapi.ts is out of date: run `npm run sdk:generate`').toBe(true);
  const table = readFileSync(new URL('../../sdk/src/operations.ts', import.meta.url), 'utf8');
  expect(table, 'sdk/src/operations.ts is out of date: run `npm run sdk:generate`').toBe(
    operationsModule(served.json()),
  );
});

it("the SDK's API-key scopes (the console's one list) are the server's SCOPES, in order, without `*`", async () => {
  const sdk = await import('../../sdk/src/index.ts');
  expect(sdk.apiKeyScopes).toEqual([...SCOPES]);
});
