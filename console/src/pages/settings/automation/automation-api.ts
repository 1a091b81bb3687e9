// decisions §20: the reads the automation and assistant pages share, each under its key, and the people and teams
// a rule or the assistant may name.
import { useQuery } from '@tanstack/react-query';
import { api } from '../../../api/client.ts';
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
  /** `keys.teams.list()` of the query-key factory (the same cached read). */
  teams: ['teams', 'list', {}] as const,
};

export const useUsers = () =>
  useQuery({ queryKey: keys.users.list({ people: 'v1' }), queryFn: () => api.users.list(), staleTime: 60_000 });

/** The organization's teams (decisions §19), whole, under the key the teams' settings page reads and refreshes. */
export const useTeams = () =>
  useQuery({ queryKey: automationKeys.teams, queryFn: () => api.teams.list(), staleTime: 60_000 });

export function userOptions(users: { id: string; name: string | null; email: string }[] | undefined): Option[] {
  return (users ?? []).map((user) => ({ id: user.id, label: user.name ?? user.email }));
}

export function teamOptions(teams: { id: string; name: string }[] | undefined): Option[] {
  return (teams ?? []).map((team) => ({ id: team.id, label: team.name }));
}
