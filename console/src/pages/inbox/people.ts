// The organization's people and teams as the inbox reads them (decisions §19): `GET /v1/users` and `GET /v1/teams`,
// each loaded once and shared by every row, header and composer (never a request per message: decisions §17).
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';

export type Person = Awaited<ReturnType<typeof api.users.list>>['items'][number];
export type Team = Awaited<ReturnType<typeof api.teams.list>>['items'][number];

export const personName = (person: Pick<Person, 'name' | 'email'>) => person.name || person.email;

/** Everyone in the organization (any role may read it: the inbox names authors and assignees). */
export function usePeople() {
  const query = useQuery({
    // Apart from Settings → Users' own list (the console route, admins only), which reads more per person.
    queryKey: keys.users.list({ directory: true }),
    queryFn: () => api.users.list(),
    staleTime: 60_000,
  });
  const people = query.data?.items ?? [];
  const byId = new Map(people.map((person) => [person.id, person]));
  return { query, people, personOf: (id: string | null | undefined) => (id ? byId.get(id) : undefined) };
}

export function useTeams() {
  const query = useQuery({ queryKey: keys.teams.list(), queryFn: () => api.teams.list(), staleTime: 60_000 });
  return { query, teams: query.data?.items ?? [] };
}
