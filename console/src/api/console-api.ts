// The operations only the console has besides sessions (decisions §17): the organization's people, its API keys and
// its messaging accounts (read only, D169).
import type { components } from '@crm-messaging/sdk';
import { api } from './client.ts';
import type { User } from './session.ts';

export interface ApiKey {
  id: string;
  name: string | null;
  prefix: string;
  scopes?: string[];
  expires_at?: string | null;
  last_used_at?: string | null;
  created_at: string;
}

export type CreatedApiKey = ApiKey & { key: string };
export type InvitedUser = User & { sign_in_url: string };

export const apiKeys = {
  list: () => api.request<{ items: ApiKey[] }>('GET', '/api-keys'),
  create: (body: { name: string; scopes?: string[]; expires_at?: string | null }) =>
    api.request<CreatedApiKey>('POST', '/api-keys', { body }),
  revoke: (id: string) => api.request<void>('DELETE', `/api-keys/${encodeURIComponent(id)}`),
};

export const users = {
  list: () => api.request<{ items: User[] }>('GET', '/users'),
  invite: (body: { email: string; name?: string; role: User['role'] }) =>
    api.request<InvitedUser>('POST', '/users', { body }),
  update: (id: string, body: { role: User['role'] }) =>
    api.request<User>('PATCH', `/users/${encodeURIComponent(id)}`, { body }),
  remove: (id: string) => api.request<void>('DELETE', `/users/${encodeURIComponent(id)}`),
  /** A new one-time sign-in link (a lost or expired one); earlier unused links stop working. */
  newSignInLink: (id: string) =>
    api.request<{ sign_in_url: string }>('POST', `/users/${encodeURIComponent(id)}/sign-in-link`),
};

export type MessagingAccount = components['schemas']['ConsoleMessagingAccount'];

export const messagingAccounts = {
  list: () => api.request<{ items: MessagingAccount[] }>('GET', '/messaging-accounts'),
};
