// Teams and canned responses (decisions §19) through the console's API (/app/api/v1/…), until the SDK carries
// `teams.*` and `cannedResponses.*` (the team-inbox branch adds them): then these calls become the SDK's.
import { api } from '../../api/client.ts';

export interface Team {
  id: string;
  name: string;
  member_ids: string[];
  auto_assign: boolean;
  max_open_per_member: number;
  created_at: string;
  updated_at: string;
}

export interface TeamInput {
  name: string;
  member_ids: string[];
  auto_assign: boolean;
  /** A number, or the typed text when it is not one (the server says why at the field). */
  max_open_per_member: number | string;
}

export interface CannedResponse {
  id: string;
  short_code: string;
  text: string;
  created_at: string;
  updated_at: string;
}

export type CannedResponseInput = Pick<CannedResponse, 'short_code' | 'text'>;

const at = (path: string, id: string) => `${path}/${encodeURIComponent(id)}`;

export const teams = {
  list: () => api.request<{ items: Team[] }>('GET', '/v1/teams'),
  create: (body: TeamInput) => api.request<Team>('POST', '/v1/teams', { body }),
  update: (id: string, body: Partial<TeamInput>) => api.request<Team>('PATCH', at('/v1/teams', id), { body }),
  delete: (id: string) => api.request<void>('DELETE', at('/v1/teams', id)),
};

export const cannedResponses = {
  list: (query: { q?: string } = {}) =>
    api.request<{ items: CannedResponse[] }>('GET', '/v1/canned-responses', { query: query.q ? query : {} }),
  create: (body: CannedResponseInput) => api.request<CannedResponse>('POST', '/v1/canned-responses', { body }),
  update: (id: string, body: Partial<CannedResponseInput>) =>
    api.request<CannedResponse>('PATCH', at('/v1/canned-responses', id), { body }),
  delete: (id: string) => api.request<void>('DELETE', at('/v1/canned-responses', id)),
};
