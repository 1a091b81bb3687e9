// `/` in the reply box offers the organization's canned responses (decisions §19, D287): the word after `/` searches
// them (`GET /v1/canned-responses?q=`: a short code's start or the text), and the one chosen replaces `/word`, filled
// for the contact by `fillCannedResponse` (its names and custom properties, option keys as labels).
import type { Conversation } from '@crm-messaging/sdk';
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { useDebounced } from '../../ui/debounce.ts';
import { useProperties } from '../../ui/lookups.ts';
import { fillCannedResponse } from './canned.ts';
import { replaceToken, type SuggestionState, tokenAt, useSuggestions } from './suggestions.tsx';

export function useCannedSuggestions({
  text,
  caret,
  contact: known,
  onInsert,
}: {
  text: string;
  caret: number;
  /** The conversation's contact: its names fill a response even before its properties are read. */
  contact: Conversation['contact'];
  onInsert: (next: { text: string; caret: number }) => void;
}): SuggestionState {
  const token = tokenAt(text, caret, '/');
  const q = useDebounced(token?.query ?? '', 150);
  const responses = useQuery({
    queryKey: keys.cannedResponses.list(q ? { q } : {}),
    queryFn: () => api.cannedResponses.list(q ? { q } : {}),
    enabled: token !== null,
    staleTime: 30_000,
  });
  // The contact (its properties) and the property definitions, read once a response is being looked for.
  const contact = useQuery({
    queryKey: keys.contacts.detail(known.id),
    queryFn: () => api.contacts.get(known.id),
    enabled: token !== null,
  });
  const properties = useProperties();
  return useSuggestions({
    token,
    items: token && q === token.query ? (responses.data?.items ?? []).slice(0, 8) : [],
    keyOf: (canned) => canned.id,
    label: 'Canned responses',
    empty: responses.isFetching || q !== token?.query ? 'Searching…' : 'No canned response matches.',
    render: (canned) => (
      <>
        <strong>/{canned.short_code}</strong> <span className="muted">{canned.text}</span>
      </>
    ),
    onChoose: (canned, at) => {
      const filled = fillCannedResponse(canned.text, contact.data ?? known, properties.data?.items ?? []);
      onInsert(replaceToken(text, at, filled));
    },
  });
}
