// decisions §20: AI_PROVIDER=sandbox, the model when none is configured anywhere: the answer of the first FAQ whose
// question the contact's message contains (ignoring case), else a handoff. No network, so `npm start` shows an
// assistant answering with no model at all.
import type { AssistantModel, ModelAnswer, ModelRequest } from './assistant-model.ts';

export const sandboxModel: AssistantModel = {
  async answer(request: ModelRequest): Promise<ModelAnswer> {
    const message = request.turns.findLast((turn) => turn.role === 'user')?.content.toLowerCase() ?? '';
    const faq = request.faqs.find((entry) => {
      const question = entry.question.trim().toLowerCase();
      return question !== '' && message.includes(question);
    });
    return faq
      ? { action: 'reply', text: faq.answer, reason: null }
      : { action: 'handoff', text: null, reason: 'no_matching_faq' };
  },
};
