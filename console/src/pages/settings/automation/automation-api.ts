// decisions §20: the reads the automation and assistant pages share, each under its key, and the people and teams
// a rule or the assistant may name.
import { useQuery } from '@tanstack/react-query';
import { api, statusOf } from '../../../api/client.ts';
import { keys } from '../../../api/keys.ts';
import type { Option } from '../../../ui/fields.tsx';

export const automationKeys = {
  businessHours: ['business-hours'] as const,
  rules: {
    all: ['automation-rules'] as const,
    list: () => ['automation-rules', 'list'] as const,
    detail: (id: string) => ['automation-rules', 'detail', id] as const,
    runs: (id: string) => ['automation-rules', 'detail', id, 'runs'] as const,
  },
  assistant: ['ai-assistant'] as const,
};

export const useUsers = () =>
  useQuery({ queryKey: keys.users.list({ people: 'v1' }), queryFn: () => api.users.list(), staleTime: 60_000 });

interface Team {
  id: string;
  name: string;
}

/**
 * The organization's teams (decisions §19, GET /v1/teams). Read through the SDK's `request` so that these pages do
 * not depend on the SDK's teams methods; a server without teams (404) has none to offer.
 */
export const useTeams = () =>
  useQuery({
    queryKey: ['teams', 'list', {}] as const,
    queryFn: async (): Promise<{ items: Team[] }> => {
      try {
        return await api.request<{ items: Team[] }>('GET', '/v1/teams');
      } catch (error) {
        if (statusOf(error) === 404) return { items: [] };
        throw error;
      }
    },
    staleTime: 60_000,
  });

export function userOptions(users: { id: string; name: string | null; email: string }[] | undefined): Option[] {
  return (users ?? []).map((user) => ({ id: user.id, label: user.name ?? user.email }));
}

export function teamOptions(teams: Team[] | undefined): Option[] {
  return (teams ?? []).map((team) => ({ id: team.id, label: team.name }));
}
