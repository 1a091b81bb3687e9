// The README's first send, run as written (with the built SDK, as an integrator would import it) against a live server.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { approvedTemplate } from '../helpers/sends.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
let h: Harness;
let baseUrl: string;
beforeAll(async () => {
  h = await startHarness();
  baseUrl = await h.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => h.close());

function run(code: string, env: Record<string, string>): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module-typescript', '-e', code], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('exit', (status) => resolve({ status, output }));
  });
}

it('the first send of the README works as written, in under ten lines', { timeout: 60_000 }, async () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const snippet = /### Your first send, with the TypeScript SDK[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(snippet, 'README section "Your first send, with the TypeScript SDK"').toBeDefined();
  expect(snippet!.trim().split('\n').length).toBeLessThan(10);
  // The snippet imports the package as an integrator would: the build that `npm install` and `npm test` make.
  expect(existsSync(new URL('../../sdk/dist/index.js', import.meta.url)), 'run `npm run sdk:build`').toBe(true);

  const { org, key } = await h.createOrg();
  await h.createAccount(org.id);
  const template = await approvedTemplate(h, key, [
    {
      type: 'BODY',
      text: 'Hi {{first_name}}',
      example: { body_text_named_params: [{ param_name: 'first_name', example: 'Ana' }] },
    },
  ]);
  const code = snippet!.replace('tpl_…', template.id).replace('http://127.0.0.1:8080', baseUrl);
  const result = await run(code, { CRM_API_KEY: key });
  expect(result.status, result.output).toBe(0);
  const broadcasts = await h.api('GET', '/v1/broadcasts', { key });
  expect(broadcasts.body.items).toMatchObject([{ template_id: template.id, requested: 1 }]);
});

it('the README’s "Answering a contact" works as written', { timeout: 60_000 }, async () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const snippet = /## Answering a contact[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(snippet, 'README section "Answering a contact"').toBeDefined();
  const { org, key } = await h.createOrg();
  const account = await h.createAccount(org.id);
  await h.admin('POST', '/sandbox/inbound', { channel_id: account.numbers[0].id, from: '+15557001234', text: 'Hi' });
  const result = await run(snippet!.replace('http://127.0.0.1:8080', baseUrl), { CRM_API_KEY: key });
  expect(result.status, result.output).toBe(0);
  expect(result.output).toMatch(/^msg_\S+ sending$/m);
  const conversation = (await h.api('GET', '/v1/conversations', { key })).body.items[0];
  expect(conversation.unread_count).toBe(0);
  const messages = (await h.api('GET', `/v1/conversations/${conversation.id}/messages`, { key })).body.items;
  expect(messages[0]).toMatchObject({ direction: 'outbound', sender: 'ai', text: 'On its way!' });
});
