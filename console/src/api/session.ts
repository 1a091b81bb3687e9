// Sessions and people (decisions §17): the operations only the console has, called through the SDK's `request`.
import { api } from './client.ts';

export interface User {
  id: string;
  email: string;
  name: string | null;
  role: 'admin' | 'agent';
  created_at: string;
  last_sign_in_at: string | null;
}

export interface Session {
  user: User;
  organization: { id: string; name: string; timezone: string };
  csrf_token: string;
  expires_at: string;
  idle_expires_at: string;
}

export const session = {
  get: () => api.request<Session>('GET', '/session'),
  signIn: (body: { email: string; password: string }) => api.request<Session>('POST', '/session', { body }),
  signOut: () => api.request<void>('DELETE', '/session'),
  /** Whom a sign-in link is for (its email), without using it up. */
  lookUpLink: (token: string) => api.request<{ email: string }>('POST', '/sign-in-links/lookup', { body: { token } }),
  /** Choose a password with the one-time token of a sign-in link; signs in. */
  choosePassword: (body: { token: string; password: string }) =>
    api.request<Session>('POST', '/sign-in-links/accept', { body }),
};
