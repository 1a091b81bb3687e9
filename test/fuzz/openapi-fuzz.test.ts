// A short fuzzing run in `npm test`, on both databases (`npm run fuzz` runs a long one): every /v1 operation gets
// generated and mutated requests; no answer is a 5xx, every error is in the contract's shape, and the server is
// healthy afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { type FuzzSetup, fuzzOperations, prepareFuzz } from './openapi-fuzz.ts';

const RUNS_PER_OPERATION = Number(process.env.FUZZ_RUNS ?? 12);

let h: Harness;
let setup: FuzzSetup;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
  setup = await prepareFuzz(h);
});
afterAll(async () => {
  // Fuzzed requests are not checked against the document one by one (their statuses are asserted here).
  h.recorded.length = 0;
  await h.close();
});

describe('fuzzing every /v1 operation from the OpenAPI document', () => {
  it('never answers 5xx, always in the contract shape, and stays healthy', { timeout: 120_000 }, async () => {
    expect(setup.operations.length).toBeGreaterThan(20);
    const sent = await fuzzOperations(h, setup, RUNS_PER_OPERATION);
    expect(sent).toBeGreaterThanOrEqual(setup.operations.length * RUNS_PER_OPERATION);
    expect((await h.api('GET', '/healthz')).status).toBe(200);
    expect((await h.api('GET', '/v1/me', { key: setup.owned.key })).status).toBe(200);
  });
});
