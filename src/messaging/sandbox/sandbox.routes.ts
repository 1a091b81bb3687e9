// /admin/v1/sandbox: operator controls of the sandbox platform (decisions §9). Registered inside the operator
// plugin, so they need the operator token; hidden from the OpenAPI document like the rest of /admin.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { errorResponse, Phone, StringEnum } from '../../http/schemas.ts';
import {
  INBOUND_TYPES,
  type InboundInput,
  type ReviewInput,
  type SandboxControls,
  type StatusInput,
} from './sandbox-controls.ts';

const errors = (...statuses: number[]) =>
  Object.fromEntries([401, 422, ...statuses].map((status) => [status, errorResponse(status)]));

const Delivered = Type.Object(
  {
    platform_message_id: Type.Optional(Type.String()),
    webhook: Type.Object({}, { additionalProperties: true, description: 'The webhook payload that was delivered.' }),
  },
  { additionalProperties: false },
);

const ReviewBody = Type.Object(
  {
    event: StringEnum(['APPROVED', 'REJECTED', 'PAUSED', 'DISABLED'] as const),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    new_category: Type.Optional(StringEnum(['MARKETING', 'UTILITY', 'AUTHENTICATION'] as const)),
  },
  { additionalProperties: false },
);

const StatusBody = Type.Object(
  {
    status: StringEnum(['delivered', 'read', 'failed'] as const),
    error: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  },
  { additionalProperties: false },
);

const InboundBody = Type.Object(
  {
    channel_id: Type.String({ minLength: 1, maxLength: 64 }),
    from: Phone,
    // decisions §15: text by default; a media message names where its bytes are (`media_url`).
    type: Type.Optional(StringEnum(INBOUND_TYPES)),
    text: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    media_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, pattern: '^https?://' })),
    caption: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
    filename: Type.Optional(Type.String({ minLength: 1, maxLength: 240 })),
    mime_type: Type.Optional(Type.String({ minLength: 3, maxLength: 255, pattern: '^[\\w.+-]+/[\\w.+-]+' })),
    reply_to_platform_message_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  },
  { additionalProperties: false },
);

export function sandboxRoutes(app: FastifyInstance, controls: SandboxControls): void {
  const hide = { hide: true, tags: ['Sandbox'] };
  app.post(
    '/sandbox/templates/:template_id/review',
    {
      schema: {
        ...hide,
        params: Type.Object({ template_id: Type.String() }),
        body: ReviewBody,
        response: { 200: Delivered, ...errors(404, 409) },
      },
    },
    async (request) =>
      controls.review((request.params as { template_id: string }).template_id, request.body as ReviewInput),
  );
  app.post(
    '/sandbox/messages/:platform_message_id/status',
    {
      schema: {
        ...hide,
        params: Type.Object({ platform_message_id: Type.String() }),
        body: StatusBody,
        response: { 200: Delivered, ...errors(404) },
      },
    },
    async (request) =>
      controls.messageStatus(
        (request.params as { platform_message_id: string }).platform_message_id,
        request.body as StatusInput,
      ),
  );
  app.post(
    '/sandbox/inbound',
    { schema: { ...hide, body: InboundBody, response: { 200: Delivered, ...errors(404) } } },
    async (request) => controls.inbound(request.body as InboundInput),
  );
}
