// decisions §20: any OpenAI-compatible chat-completions endpoint through the `openai` package with `baseURL`
// (D263): `POST {base_url}/chat/completions` with `model` and `messages` (the system message, then the
// conversation's recent messages as user / assistant). No retries (one call per contact message), and a deadline
// (30 s by default): an error, a timeout or an answer that is not the JSON asked for is a ModelError.
import OpenAI from 'openai';
import {
  type AssistantModel,
  type ModelAnswer,
  ModelError,
  type ModelRequest,
  parseAnswer,
  systemPrompt,
} from './assistant-model.ts';

export interface OpenAiModelOptions {
  baseUrl: string;
  model: string;
  apiKey: string | null;
  timeoutMs: number;
  /** The address policy's fetch for an organization's own endpoint; the platform's fetch for the deployment's. */
  fetch?: typeof fetch;
}

export function openAiModel(options: OpenAiModelOptions): AssistantModel {
  const client = new OpenAI({
    baseURL: options.baseUrl,
    // Servers that take no key (Ollama) still get a placeholder: the client refuses to start without one.
    apiKey: options.apiKey ?? 'none',
    timeout: options.timeoutMs,
    maxRetries: 0,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return {
    async answer(request: ModelRequest): Promise<ModelAnswer> {
      let content: unknown;
      try {
        const completion = await client.chat.completions.create({
          model: options.model,
          messages: [{ role: 'system', content: systemPrompt(request) }, ...request.turns],
        });
        content = completion.choices?.[0]?.message?.content;
      } catch (error) {
        throw new ModelError(`the model call failed: ${(error as Error).message}`);
      }
      return parseAnswer(content);
    },
  };
}
