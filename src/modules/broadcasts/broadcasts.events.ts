// The events of a broadcast and its recipients (decisions §11, §16), declared with the schemas the broadcasts
// feature shows (D332); the queue engine (recipients/) records them by type alone.

import { Type } from 'typebox';
import type { EventDefinitions } from '../events/event-types.ts';
import { BroadcastSchema, RecipientSchema } from './broadcasts.schemas.ts';

export const RecipientEventData = Type.Object(
  {
    broadcast_id: Type.String(),
    ...RecipientSchema.properties,
  },
  {
    additionalProperties: false,
    title: 'BroadcastRecipientEventData',
    description: 'A broadcast recipient as the recipients list shows it, with its broadcast’s id.',
    // The recipient's own example (broadcasts.schemas.ts) with its broadcast's id.
    examples: [
      {
        broadcast_id: 'bc_01JH5ZM2A3B4C5D6E7F8G9H0J1',
        ...(RecipientSchema as unknown as { examples: Record<string, unknown>[] }).examples[0],
      },
    ],
  },
);

export const BROADCAST_EVENTS = {
  'broadcast.recipient.updated': {
    data: RecipientEventData,
    summary: 'A broadcast recipient moved',
    description:
      'Data: the Broadcast recipient with `broadcast_id`, each time it moves to `sent`, `delivered`, `read` or `failed`.',
  },
  'broadcast.started': {
    data: BroadcastSchema,
    summary: 'An audience broadcast started',
    description:
      'decisions §16: Data: the Broadcast when the worker starts it (at `send_at`, or at once), now `preparing`.',
  },
  'broadcast.finished': {
    data: BroadcastSchema,
    summary: 'A broadcast finished',
    description: 'Data: the Broadcast, when it becomes `completed`, `cancelled` or `stopped_low_balance`.',
  },
} as const satisfies EventDefinitions;

// The outbox knows these types through its catalog, merged here (D332); the wiring lists the definitions.
declare module '../events/event-types.ts' {
  interface EventCatalog extends Readonly<typeof BROADCAST_EVENTS> {}
}
