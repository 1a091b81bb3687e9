// @crm-messaging/sdk/console: the console's client (decisions §17, D326). The console's own operations under
// /app/api (sessions, its people, API keys, messaging accounts, presence, the live stream) are in the served
// document with their schemas, but they take a session cookie and a CSRF header, never a key: an integrator's
// CrmClient would only ever get 401s from them, so they live in this separate entry point, not in the public client.
// ConsoleClient is the public client (the /v1 operations, mounted again under the console's base) plus a `console`
// group of named methods whose method and path come from the generated `consoleOperationTable`.
import { type ClientOptions, CrmClient } from './client.ts';
import { type CallOptions, Transport } from './http.ts';
import { consoleOperationTable } from './operations.ts';
import type { BodyOf, ResponseOf } from './types.ts';

export type ConsoleOperationId = keyof typeof consoleOperationTable;

/** The signed-in person, their organization and the session's times. */
export type Session = ResponseOf<'consoleGetSession'>;
/** A person of the organization as the console's admin pages see them. */
export type ConsoleUser = ResponseOf<'consoleListUsers'>['items'][number];
/** A role one can give (a person read back may show a newer one). */
export type UserRole = BodyOf<'consoleInviteUser'>['role'];
/** An invited person, with the one-time `sign_in_url` to hand to them. */
export type InvitedUser = ResponseOf<'consoleInviteUser'>;
export type ApiKey = ResponseOf<'consoleListApiKeys'>['items'][number];
/** A new API key, with its full `key` shown only this once. */
export type CreatedApiKey = ResponseOf<'consoleCreateApiKey'>;
export type MessagingAccount = ResponseOf<'consoleListMessagingAccounts'>['items'][number];

export class ConsoleClient extends CrmClient {
  readonly #http: Transport;

  /** `baseUrl` is the console's API, `/app/api`; `session` gives the CSRF token of every change. */
  constructor(options: ClientOptions) {
    super(options);
    this.#http = new Transport(options);
  }

  #path(id: ConsoleOperationId, ids: string[]): string {
    let index = 0;
    return consoleOperationTable[id].path.replace(/\{[a-z_]+\}/g, () => encodeURIComponent(ids[index++] ?? ''));
  }

  #call<T>(id: ConsoleOperationId, ids: string[], options: CallOptions & { body?: unknown } = {}): Promise<T> {
    return this.#http.request<T>(consoleOperationTable[id].method, this.#path(id, ids), options);
  }

  /** The console's own operations (decisions §17), relative to the console's base. */
  readonly console = {
    session: {
      /** 401 `session_required` when signed out. */
      get: (options?: CallOptions): Promise<Session> => this.#call('consoleGetSession', [], options),
      signIn: (body: BodyOf<'consoleSignIn'>, options?: CallOptions): Promise<ResponseOf<'consoleSignIn'>> =>
        this.#call('consoleSignIn', [], { ...options, body }),
      signOut: (options?: CallOptions): Promise<void> => this.#call('consoleSignOut', [], options),
    },
    signInLinks: {
      /** Whom a sign-in link is for (its email), without using it up. */
      lookUp: (
        body: BodyOf<'consoleLookUpSignInLink'>,
        options?: CallOptions,
      ): Promise<ResponseOf<'consoleLookUpSignInLink'>> =>
        this.#call('consoleLookUpSignInLink', [], { ...options, body }),
      /** Chooses a password with the link's one-time token, and signs in. */
      accept: (
        body: BodyOf<'consoleAcceptSignInLink'>,
        options?: CallOptions,
      ): Promise<ResponseOf<'consoleAcceptSignInLink'>> =>
        this.#call('consoleAcceptSignInLink', [], { ...options, body }),
    },
    me: {
      /** Available or away (decisions §19). */
      update: (body: BodyOf<'consoleUpdateMe'>, options?: CallOptions): Promise<ResponseOf<'consoleUpdateMe'>> =>
        this.#call('consoleUpdateMe', [], { ...options, body }),
    },
    users: {
      list: (options?: CallOptions): Promise<ResponseOf<'consoleListUsers'>> =>
        this.#call('consoleListUsers', [], options),
      invite: (body: BodyOf<'consoleInviteUser'>, options?: CallOptions): Promise<InvitedUser> =>
        this.#call('consoleInviteUser', [], { ...options, body }),
      update: (
        userId: string,
        body: BodyOf<'consoleUpdateUser'>,
        options?: CallOptions,
      ): Promise<ResponseOf<'consoleUpdateUser'>> => this.#call('consoleUpdateUser', [userId], { ...options, body }),
      remove: (userId: string, options?: CallOptions): Promise<void> =>
        this.#call('consoleRemoveUser', [userId], options),
      /** A new one-time sign-in link (a lost or expired one); earlier unused links stop working. */
      newSignInLink: (userId: string, options?: CallOptions): Promise<ResponseOf<'consoleNewSignInLink'>> =>
        this.#call('consoleNewSignInLink', [userId], options),
    },
    apiKeys: {
      list: (options?: CallOptions): Promise<ResponseOf<'consoleListApiKeys'>> =>
        this.#call('consoleListApiKeys', [], options),
      create: (body: BodyOf<'consoleCreateApiKey'>, options?: CallOptions): Promise<CreatedApiKey> =>
        this.#call('consoleCreateApiKey', [], { ...options, body }),
      revoke: (keyId: string, options?: CallOptions): Promise<void> =>
        this.#call('consoleRevokeApiKey', [keyId], options),
    },
    messagingAccounts: {
      /** Read only (D169): the operator sets them. */
      list: (options?: CallOptions): Promise<ResponseOf<'consoleListMessagingAccounts'>> =>
        this.#call('consoleListMessagingAccounts', [], options),
    },
    presence: {
      /** Which conversation this page has open, or null (D289); `keepalive` lets it outlive a closing page. */
      set: (body: BodyOf<'consoleSetPresence'>, options?: CallOptions): Promise<void> =>
        this.#call('consoleSetPresence', [], { ...options, body }),
    },
    events: {
      /** The address of the live stream (server-sent events), for an `EventSource`. */
      url: (): string => `${this.baseUrl}${this.#path('consoleEvents', [])}`,
    },
  };
}

/** The console client's method for each console operation, under `console.` (test/sdk/console-client.test.ts). */
export const methodOfConsoleOperation = {
  consoleSignIn: 'session.signIn',
  consoleGetSession: 'session.get',
  consoleSignOut: 'session.signOut',
  consoleLookUpSignInLink: 'signInLinks.lookUp',
  consoleAcceptSignInLink: 'signInLinks.accept',
  consoleUpdateMe: 'me.update',
  consoleListUsers: 'users.list',
  consoleInviteUser: 'users.invite',
  consoleUpdateUser: 'users.update',
  consoleRemoveUser: 'users.remove',
  consoleNewSignInLink: 'users.newSignInLink',
  consoleListApiKeys: 'apiKeys.list',
  consoleCreateApiKey: 'apiKeys.create',
  consoleListMessagingAccounts: 'messagingAccounts.list',
  consoleRevokeApiKey: 'apiKeys.revoke',
  consoleEvents: 'events.url',
  consoleSetPresence: 'presence.set',
} as const satisfies Record<ConsoleOperationId, string>;
