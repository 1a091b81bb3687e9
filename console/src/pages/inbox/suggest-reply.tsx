// "Suggest a reply" (decisions §20): the assistant's draft (POST /v1/conversations/{id}/ai-draft, which sends
// nothing) fills the reply box; the person edits it and sends it as themselves. A 409 ai_disabled or 502
// ai_provider_error is shown beside the button as a sentence.
import { useMutation } from '@tanstack/react-query';
import { Button } from 'react-aria-components';
import { api } from '../../api/client.ts';
import { showError } from '../../ui/errors.ts';

export function SuggestReply({ conversationId, onDraft }: { conversationId: string; onDraft: (text: string) => void }) {
  const draft = useMutation({
    mutationFn: () => api.conversations.aiDraft(conversationId),
    onSuccess: (answer) => onDraft(answer.text),
  });
  return (
    <div className="suggest-reply">
      <Button onPress={() => draft.mutate()} isDisabled={draft.isPending}>
        {draft.isPending ? 'Suggesting…' : 'Suggest a reply'}
      </Button>
      <span role="status" className="muted">
        {draft.isSuccess ? 'A suggested reply is in the message box: edit it, then send it.' : ''}
      </span>
      {draft.isError ? (
        <span role="alert" className="field-error">
          {showError(draft.error).message}
        </span>
      ) : null}
    </div>
  );
}
