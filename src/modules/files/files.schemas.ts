// decisions §19 (D294): a file uploaded from a computer, to be sent in a reply by `file_id`.
import { Type } from 'typebox';
import { DateTime, IdParam, StringEnum } from '../../http/schemas.ts';
import { FILENAME_MAX } from '../conversations/replies.schemas.ts';

export const FILE_KINDS = ['image', 'video', 'audio', 'document'] as const;
/** The largest file (a 100 MB document) in base64, with its padding. */
export const DATA_MAX = Math.ceil((100 * 1024 * 1024) / 3) * 4;
/** D294: an upload is kept 30 days (as long as the platform keeps uploaded media). */
export const FILE_TTL_MS = 30 * 24 * 60 * 60 * 1000;

const ONE_PIXEL_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

export const FileUpload = Type.Object(
  {
    filename: Type.String({
      minLength: 1,
      maxLength: FILENAME_MAX,
      description: 'The file’s name (a document is sent with it).',
    }),
    mime_type: Type.Optional(
      Type.String({
        minLength: 3,
        maxLength: 255,
        pattern: '^[\\w.+-]+/[\\w.+-]+$',
        description: 'Its media type; by default the one its name’s extension says.',
      }),
    ),
    data: Type.String({
      minLength: 1,
      maxLength: DATA_MAX,
      description:
        'The bytes, base64 (RFC 4648, with padding). Limits: image 5 MB, video and audio 16 MB, document 100 MB.',
    }),
  },
  {
    additionalProperties: false,
    title: 'FileUpload',
    description: 'A file from the computer, for a reply (`file_id`).',
    examples: [{ filename: 'receipt.png', mime_type: 'image/png', data: ONE_PIXEL_PNG }],
  },
);

export const FileSchema = Type.Object(
  {
    id: Type.String({ examples: ['file_01j9z3k4m5n6p7q8r9s0t1v2w3'] }),
    type: StringEnum(FILE_KINDS, { description: 'The kind of message it can be sent as.' }),
    mime_type: Type.String(),
    filename: Type.String(),
    size: Type.Integer({ minimum: 1, description: 'Bytes.' }),
    created_at: DateTime,
    expires_at: { ...DateTime, description: 'After this, a reply can no longer use it and its bytes are gone.' },
  },
  { additionalProperties: false, title: 'File', description: 'An uploaded file (D294).' },
);

export const FileIdParams = IdParam('file_id');
