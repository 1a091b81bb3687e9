// The events an organization's webhook endpoints can receive (decisions §11), as the outbox knows them without
// knowing a feature (D332): each feature that records events declares their types and `data` schemas in its own
// `<feature>.events.ts` and merges them into `EventCatalog` (so every `recordEvents` call is typed by its type); the
// wiring lists the same definitions at run time (`EVENT_CATALOG`, wiring.ts), which build the OpenAPI `webhooks`
// section and the types an endpoint may subscribe to. events/ declares only its own test event, `ping`.
import { type Static, type TSchema, Type } from 'typebox';
import { DateTime } from '../../http/schemas.ts';

/** One event type: the schema of its `data` and what causes it (the OpenAPI summary and description). */
export interface EventDefinition {
  readonly data: TSchema;
  readonly summary: string;
  readonly description: string;
}

export type EventDefinitions = Readonly<Record<string, EventDefinition>>;

export const PingData = Type.Object(
  { endpoint_id: Type.String() },
  { additionalProperties: false, title: 'PingData', description: 'The endpoint the test call was made for.' },
);

/** The outbox's own event: the test call of an endpoint (`recordPing`). */
export const OUTBOX_EVENTS = {
  ping: {
    data: PingData,
    summary: 'A test event',
    description: 'Sent only by `POST /v1/webhook-endpoints/{endpoint_id}/test`, to that endpoint alone.',
  },
} as const satisfies EventDefinitions;

/** Every event type with its definition: `ping` here, the others merged in by the features' `*.events.ts` (D332). */
export interface EventCatalog extends Readonly<typeof OUTBOX_EVENTS> {}

export type EventType = keyof EventCatalog & string;

export type EventData<T extends EventType> = Static<EventCatalog[T]['data']>;

/** One event as a feature records it: its type and its data (typed by the type). */
export type EventInput = { [T in EventType]: { type: T; data: EventData<T> } }[EventType];

/** The types an endpoint can subscribe to, in the catalog's order (`ping` goes only where the test call sends it). */
export const subscribableEventTypes = (catalog: EventDefinitions): string[] =>
  Object.keys(catalog).filter((type) => type !== 'ping');

/** `broadcast.recipient.updated` -> `BroadcastRecipientUpdatedEvent`: the component name of a type's envelope. */
export const eventTitle = (type: string) =>
  `${type
    .split(/[._]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('')}Event`;

/** The envelope every delivery carries as its body. */
export const eventEnvelope = <T extends TSchema>(type: string, data: T) =>
  Type.Object(
    {
      id: Type.String({ description: '`evt_…`; also the `webhook-id` header, the same on every retry.' }),
      type: Type.Literal(type),
      created_at: DateTime,
      data,
    },
    { additionalProperties: false, title: eventTitle(type), description: `The body of a \`${type}\` delivery.` },
  );
