// A local stand-in for an OpenAI-compatible chat-completions server (decisions §20), over real HTTP on 127.0.0.1.
// It records every request it receives and answers scripted completions in the API's documented shape: a content
// string, an HTTP error, a hang (for timeouts), or an answer held until the test releases it.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedCompletion {
  path: string;
  headers: IncomingHttpHeaders;
  body: { model: string; messages: { role: string; content: string }[] } & Record<string, unknown>;
}

export type ScriptedCompletion =
  /** The first choice's content (the assistant's JSON, or garbage), after `after` settles or `delayMs` passes. */
  | { content: string; after?: Promise<unknown>; delayMs?: number }
  | { status: number; body?: unknown }
  /** Never answer (until the server closes). */
  | { hang: true };

export interface FakeOpenAi {
  /** `http://127.0.0.1:PORT/v1`: the `base_url` to configure. */
  baseUrl: string;
  requests: RecordedCompletion[];
  /** Queues answers for the next requests; without one, the default answer. */
  script(...answers: ScriptedCompletion[]): void;
  /** The answer when nothing is scripted. */
  defaultAnswer: ScriptedCompletion;
  close(): Promise<void>;
}

/** An assistant's answer as the model would write it. */
export const answer = (value: Record<string, unknown>): ScriptedCompletion => ({ content: JSON.stringify(value) });

export async function startFakeOpenAi(): Promise<FakeOpenAi> {
  const queue: ScriptedCompletion[] = [];
  const hanging = new Set<ServerResponse>();
  const fake: FakeOpenAi = {
    baseUrl: '',
    requests: [],
    script: (...answers) => queue.push(...answers),
    defaultAnswer: answer({ action: 'reply', text: 'Hello from the model.' }),
    close: async () => {
      for (const response of hanging) response.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const text = Buffer.concat(chunks).toString('utf8');
      fake.requests.push({
        path: request.url ?? '',
        headers: request.headers,
        body: text === '' ? ({} as RecordedCompletion['body']) : JSON.parse(text),
      });
      if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
        response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
        return;
      }
      const scripted = queue.shift() ?? fake.defaultAnswer;
      if ('hang' in scripted) {
        hanging.add(response);
        return;
      }
      if ('status' in scripted) {
        response
          .writeHead(scripted.status, { 'content-type': 'application/json' })
          .end(JSON.stringify(scripted.body ?? { error: { message: 'scripted failure', type: 'server_error' } }));
        return;
      }
      if (scripted.after) await scripted.after;
      if (scripted.delayMs) await new Promise((resolve) => setTimeout(resolve, scripted.delayMs));
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-fake',
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: 'fake-model',
          choices: [{ index: 0, message: { role: 'assistant', content: scripted.content }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return fake;
}
