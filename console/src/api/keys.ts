// One query-key factory per resource (style.md, the console): every cached read is named here, and live updates
// invalidate these keys instead of patching cached data by hand.
const factory = <const R extends string>(resource: R) => ({
  all: [resource] as const,
  list: (query: object = {}) => [resource, 'list', query] as const,
  detail: (id: string) => [resource, 'detail', id] as const,
});

export const keys = {
  session: ['session'] as const,
  organization: ['organization'] as const,
  conversations: {
    ...factory('conversations'),
    messages: (id: string) => ['conversations', 'detail', id, 'messages'] as const,
  },
  contacts: factory('contacts'),
  broadcasts: {
    ...factory('broadcasts'),
    recipients: (id: string, query: object = {}) => ['broadcasts', 'detail', id, 'recipients', query] as const,
  },
  templates: factory('templates'),
  phones: factory('phones'),
  properties: factory('properties'),
  funnelStages: factory('funnel-stages'),
  subOrigins: factory('sub-origins'),
  webhookEndpoints: {
    ...factory('webhook-endpoints'),
    deliveries: (id: string) => ['webhook-endpoints', 'detail', id, 'deliveries'] as const,
  },
  apiKeys: factory('api-keys'),
  users: factory('users'),
  teams: factory('teams'),
  cannedResponses: factory('canned-responses'),
  messagingAccounts: factory('messaging-accounts'),
};

/** Which cached reads an event of the organization's stream makes stale (its `type`'s first word). */
export function keysForEvent(type: string): readonly (readonly string[])[] {
  const resource = type.split('.')[0];
  switch (resource) {
    case 'message':
    case 'conversation':
      return [keys.conversations.all, keys.contacts.all];
    case 'contact':
      return [keys.contacts.all];
    case 'broadcast':
      return [keys.broadcasts.all];
    case 'template':
      return [keys.templates.all];
    case 'webhook_endpoint':
    case 'delivery':
      return [keys.webhookEndpoints.all];
    default:
      return [];
  }
}
