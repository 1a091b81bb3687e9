// The OpenAPI 3.1 `webhooks` section: one entry per event type, its body the event envelope with the type's `data`
// schema, and the Standard Webhooks headers each delivery carries (decisions §11).
import { type EventDefinitions, eventEnvelope } from './event-types.ts';

const headers = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'The event id (`evt_…`), the same on every retry: deduplicate by it.',
    schema: { type: 'string' },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'Unix seconds of this attempt; refuse ones too far from your clock (replays).',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      '`v1,` + base64 of HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the base64-decoded ' +
      'part of the endpoint secret after `whsec_`. During a rotation, two signatures separated by a space (new ' +
      'secret, then the previous one for 24 hours). Verify with any Standard Webhooks library.',
    schema: { type: 'string' },
  },
];

const responses = {
  '2XX': { description: 'Received. Answer within 10 s; the body is ignored.' },
  '410': { description: 'Gone: the endpoint is disabled (`disabled_reason: "gone"`) and receives nothing more.' },
  default: {
    description:
      'Any other answer, a timeout, a redirect (never followed) or a connection error is retried after 5 s, 5 min, ' +
      '30 min, 2 h, 5 h, 10 h and 10 h, then the delivery is `failed`. An endpoint whose attempts have all failed ' +
      'for 5 days is disabled (`disabled_reason: "failing"`).',
  },
};

/** The section for the event types the wiring lists (`EVENT_CATALOG`, in its order). */
export function webhooksDocument(catalog: EventDefinitions): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(catalog).map(([type, definition]) => [
      type,
      {
        post: {
          tags: ['Webhook events'],
          summary: definition.summary,
          description: `${definition.description} Sent as \`POST\` to each enabled endpoint subscribed to \`${type}\` when the event is recorded.`,
          operationId: `event_${type.replaceAll('.', '_')}`,
          parameters: headers,
          requestBody: {
            required: true,
            content: { 'application/json': { schema: eventEnvelope(type, definition.data) } },
          },
          responses,
          security: [],
        },
      },
    ]),
  );
}
