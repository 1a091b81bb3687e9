// GET /v1/conversations/{conversation_id}/messages/{message_id}/media (decisions §15): a media message's bytes,
// streamed with their type. The body is never built in memory: the platform's (or the URL's) stream is piped on.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { authOf } from '../../http/auth.ts';
import { v1Errors } from '../../http/schemas.ts';
import { type ConversationMediaService, FILE_TYPE_RANGES } from './media.service.ts';

const Params = Type.Object(
  {
    conversation_id: Type.String({ minLength: 1, maxLength: 64 }),
    message_id: Type.String({ minLength: 1, maxLength: 64 }),
  },
  { additionalProperties: false },
);

/**
 * The types a file is answered with (D225): the platform's (or the URL's) own type, `image/png`, `audio/ogg`,
 * `application/pdf`, …; a type outside these ranges, or none, is answered `application/octet-stream`.
 */
const FILE_RANGES = FILE_TYPE_RANGES.map((top) => `${top}/*`);

const FileResponse = {
  description:
    'The file’s bytes, with its own type in `Content-Type` (`image/jpeg`, `audio/ogg`, `application/pdf`, …; ' +
    '`application/octet-stream` when unknown) and its size in `Content-Length` when known. Always an attachment, ' +
    'never run by a browser.',
  // `Content-Type` is the file's own (`image/jpeg`, `application/pdf`, …), of one of these ranges (D225).
  headers: {
    'Content-Length': { type: 'integer', description: 'The file’s size in bytes, when known.' },
    'Content-Disposition': {
      type: 'string',
      description: '`attachment`, with the file’s name (`filename*`) when it has one.',
    },
  },
  content: Object.fromEntries(FILE_RANGES.map((range) => [range, { schema: { type: 'string', format: 'binary' } }])),
};

/** RFC 6266 with the RFC 8187 encoding: any file name, safely. */
function disposition(filename: string | undefined): string {
  return filename === undefined ? 'attachment' : `attachment; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

export function conversationMediaRoutes(parent: FastifyInstance, media: ConversationMediaService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/conversations/:conversation_id/messages/:message_id/media',
    {
      schema: {
        tags: ['Conversations'],
        summary: 'Download a message’s file',
        description:
          'decisions §15: the file of a media message (`media` not null), streamed. An inbound file is fetched from ' +
          'the messaging platform when asked; an outbound one from the URL it was sent by, or (D294) the uploaded ' +
          'file’s stored bytes. 404 `not_found` for a message without a file; 502 `media_not_found` when the ' +
          'platform (or the URL) no longer has it, or the uploaded file expired (`source: "file"`); 503 ' +
          '`media_unavailable` when it could not be reached now.',
        operationId: 'downloadConversationMessageMedia',
        params: Params,
        response: {
          200: FileResponse,
          ...v1Errors({
            404: [],
            422: [],
            502: {
              codes: ['media_not_found'],
              description: 'The platform (or, for an outbound file, its URL or expired upload) no longer has the file.',
            },
            503: {
              codes: ['media_unavailable'],
              description: 'The platform (or the file’s URL) could not give the file now; try again later.',
            },
          }),
        },
      },
    },
    async (request, reply) => {
      const { conversation_id: conversationId, message_id: messageId } = request.params;
      const file = await media.download(authOf(request).orgId, conversationId, messageId);
      reply
        .header('Content-Type', file.contentType)
        .header('Content-Disposition', disposition(file.filename))
        // The bytes are the contact's: never sniffed, never run as a page of this origin.
        .header('X-Content-Type-Options', 'nosniff')
        .header('Content-Security-Policy', "default-src 'none'; sandbox");
      if (file.contentLength !== undefined) reply.header('Content-Length', String(file.contentLength));
      // Handed to Fastify as a web stream: it writes with backpressure, cancels the stream (and so the download) when
      // the caller goes away, and for HEAD cancels it at once rather than reading it through.
      return reply.send(file.body);
    },
  );
}
