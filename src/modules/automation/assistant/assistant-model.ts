// decisions §20: the assistant's model, a port with two adapters — any OpenAI-compatible chat-completions endpoint
// (openai-model.ts) and the sandbox, which answers from the FAQs (sandbox-model.ts). The answer is always the JSON
// `{action, text?, reason?}`: a handoff is decided by a field, never by a magic string in the text.

export interface Faq {
  question: string;
  answer: string;
}

/** One message of the conversation as the model sees it (never a private note, decisions §19). */
export interface ModelTurn {
  role: 'user' | 'assistant';
  content: string;
}

export interface ModelRequest {
  instructions: string;
  faqs: Faq[];
  /** The conversation's recent messages, oldest first; the last is the contact's message to answer. */
  turns: ModelTurn[];
}

export type ModelAnswer =
  | { action: 'reply'; text: string; reason: string | null }
  | { action: 'resolve'; text: string | null; reason: string | null }
  | { action: 'handoff'; text: null; reason: string };

/** The model failed: an error, a timeout or an answer that is not the JSON asked for (decisions §20). */
export class ModelError extends Error {}

export interface AssistantModel {
  answer(request: ModelRequest): Promise<ModelAnswer>;
}

export const MAX_TEXT = 4096;
const MAX_REASON = 200;

/** The first choice's content, parsed as decisions §20 says; anything else is a ModelError. */
export function parseAnswer(content: unknown): ModelAnswer {
  if (typeof content !== 'string') throw new ModelError('the answer has no content');
  // A JSON object, possibly inside one Markdown code fence (models add one however asked).
  const body = content
    .trim()
    .replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/i, '$1')
    .trim();
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new ModelError('the answer is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ModelError('the answer is not a JSON object');
  }
  const { action, text, reason } = parsed as Record<string, unknown>;
  const checkedReason = typeof reason === 'string' && reason.trim() !== '' ? reason.trim().slice(0, MAX_REASON) : null;
  const checkedText = typeof text === 'string' && text.trim() !== '' ? text.trim() : null;
  if (text !== undefined && text !== null && typeof text !== 'string') throw new ModelError('text is not a string');
  if (checkedText !== null && checkedText.length > MAX_TEXT) throw new ModelError('text is over 4,096 characters');
  switch (action) {
    case 'reply':
      if (checkedText === null) throw new ModelError('a reply without text');
      return { action, text: checkedText, reason: checkedReason };
    case 'resolve':
      return { action, text: checkedText, reason: checkedReason };
    case 'handoff':
      return { action, text: null, reason: checkedReason ?? 'model_handoff' };
    default:
      throw new ModelError('unknown action');
  }
}

/** The system message: the organization's instructions, its FAQs, and the answer's format. */
export function systemPrompt(request: Pick<ModelRequest, 'instructions' | 'faqs'>): string {
  const faqs = request.faqs.map((faq, index) => `${index + 1}. Q: ${faq.question}\n   A: ${faq.answer}`).join('\n');
  return [
    'You answer a business’s customers in a chat on its behalf.',
    request.instructions.trim() === '' ? '' : `The business’s instructions:\n${request.instructions.trim()}`,
    faqs === '' ? '' : `Frequently asked questions and their answers:\n${faqs}`,
    'Answer ONLY with one JSON object, nothing else: {"action": "reply" | "handoff" | "resolve", "text": string, ' +
      '"reason": string}. "reply" sends "text" to the customer (at most 4096 characters). "resolve" sends "text" ' +
      'if any and closes the conversation (the customer is done). "handoff" passes the conversation to a person; ' +
      'give a short "reason". Hand off whenever you are not sure of the answer or the customer asks for a person.',
  ]
    .filter(Boolean)
    .join('\n\n');
}
