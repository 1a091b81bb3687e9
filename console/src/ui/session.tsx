// The signed-in person and their organization, read once and shared by every page (the organization's timezone
// formats every time shown).

import type { Session } from '@crm-messaging/sdk/console';
import { useQuery } from '@tanstack/react-query';
import { createContext, useContext } from 'react';
import { api, readRetryDelay, retryRead, statusOf } from '../api/client.ts';
import { keys } from '../api/keys.ts';
import { formatTime } from './time.ts';

export const SessionContext = createContext<Session | null>(null);

/** The session: a 401 is an answer (sign in), a 429 is asked again after its Retry-After (D239). */
export function useSessionQuery() {
  return useQuery({
    queryKey: keys.session,
    queryFn: () => api.console.session.get(),
    retry: (count, error) => statusOf(error) === 429 && retryRead(count, error),
    retryDelay: readRetryDelay,
    staleTime: 60_000,
  });
}

export function useSession(): Session {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside a signed-in page');
  return value;
}

/** A formatter of times in the organization's timezone. */
export function useTime(): (iso: string | null | undefined) => string {
  const { organization } = useSession();
  return (iso) => formatTime(iso, organization.timezone);
}
