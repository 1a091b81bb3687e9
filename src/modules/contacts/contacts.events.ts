// The events the contacts feature records (decisions §11), declared by the feature that owns their data (D332).

import { Type } from 'typebox';
import type { EventDefinitions } from '../events/event-types.ts';
import { ContactSchema } from './contacts.schemas.ts';

export const ContactDeletedData = Type.Object(
  { id: Type.String() },
  { additionalProperties: false, title: 'ContactDeletedData', description: 'The id of a deleted contact.' },
);

export const CONTACT_EVENTS = {
  'contact.created': {
    data: ContactSchema,
    summary: 'A contact was created',
    description: 'Data: the Contact, as `GET /v1/contacts/{contact_id}` returns it.',
  },
  'contact.updated': {
    data: ContactSchema,
    summary: 'A contact was updated',
    description: 'Data: the Contact after the change.',
  },
  'contact.deleted': {
    data: ContactDeletedData,
    summary: 'A contact was deleted',
    description: 'Data: `{id}` of the deleted contact.',
  },
} as const satisfies EventDefinitions;

// The outbox knows these types through its catalog, merged here (D332); the wiring lists the definitions.
declare module '../events/event-types.ts' {
  interface EventCatalog extends Readonly<typeof CONTACT_EVENTS> {}
}
