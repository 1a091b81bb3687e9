// decisions §19 (D294): `POST /v1/files` (a file from the computer, for a reply) and `GET /v1/files/{file_id}`.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { described, v1Errors } from '../../http/schemas.ts';
import { DATA_MAX, FileIdParams, FileSchema, FileUpload } from './files.schemas.ts';
import type { FilesService } from './files.service.ts';

const tags = ['Conversations'];
/** The largest upload's JSON: its base64 and room for the rest. */
export const FILE_BODY_LIMIT = DATA_MAX + 64 * 1024;

export function filesRoutes(parent: FastifyInstance, files: FilesService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/files',
    {
      bodyLimit: FILE_BODY_LIMIT,
      schema: {
        tags,
        summary: 'Upload a file for a reply',
        description:
          'decisions §19 (D294): a file from the computer, base64 in `data`, to send in a reply with ' +
          '`{type, file_id}` instead of `media_url`. Its type is `mime_type`, else the one its name’s extension says; ' +
          'the bytes must be of that type (image JPEG/PNG/WebP, video MP4/3GPP, audio AAC/MP3/MP4/AMR/OGG, document ' +
          'PDF/Office/plain text) and within its limit (image 5 MB, video and audio 16 MB, document 100 MB). Kept 30 ' +
          'days (`expires_at`), for this organization only. Refusals: the body (422, `data` not base64, no type), ' +
          '`media_type_mismatch` (422: a type the platform does not take, or bytes of another type), ' +
          '`media_too_large` (422, with `limit`), a body over 140 MB (413).',
        operationId: 'uploadFile',
        body: FileUpload,
        response: {
          201: described('The file, stored.', FileSchema),
          ...v1Errors({
            413: { description: 'Body over 140 MB (a 100 MB file in base64).' },
            422: {
              codes: ['media_type_mismatch', 'media_too_large'],
              description: 'Invalid input; a file of a type the platform does not take, or over its limit.',
            },
          }),
        },
      },
    },
    async (request, reply) => {
      const auth = authOf(request);
      return reply.code(201).send(await files.upload(auth.orgId, auth.user?.id ?? null, request.body));
    },
  );

  app.get(
    '/files/:file_id',
    {
      schema: {
        tags,
        summary: 'Read an uploaded file’s description',
        description: 'decisions §19 (D294): an unexpired file of the organization (not its bytes).',
        operationId: 'getFile',
        params: FileIdParams,
        response: { 200: described('The file.', FileSchema), ...v1Errors({ 404: [], 422: [] }) },
      },
    },
    async (request) => files.get(authOf(request).orgId, request.params.file_id),
  );
}
