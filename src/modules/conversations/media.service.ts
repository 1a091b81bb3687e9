// decisions §15: a media message's file, answered as a stream. Inbound files are fetched from the platform when
// asked (Cloud API: the media URL lookup, then the download with the token); outbound files from the URL they were
// sent by, under the media fetcher's address policy. Nothing here holds a whole file: the body is handed on as it
// arrives, and cancelled when the caller goes away.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { ApiError, notFound } from '../../http/errors.ts';
import type { MediaFetcher } from '../../messaging/media/media-fetcher.ts';
import type { MediaDownload, MessagingPlatform } from '../../messaging/platform.ts';
import { fileBytes } from '../files/files.service.ts';
import * as repo from './conversations.repo.ts';
import type { MessageMedia } from './message-view.ts';

export interface MediaFile {
  /** A valid media type (what the platform or the server said, else `application/octet-stream`). */
  contentType: string;
  contentLength?: number;
  filename?: string;
  body: ReadableStream<Uint8Array>;
}

/** A type that may go into a header as it is: `type/subtype` with optional parameters, nothing else. */
const MEDIA_TYPE = /^[\w.+-]+\/[\w.+-]+(?:\s*;\s*[\w.+-]+=(?:[\w.+-]+|"[^"\\\r\n]*"))*$/;

/** The top-level types a file is answered with, as the OpenAPI document lists them (D225). */
export const FILE_TYPE_RANGES = ['image', 'video', 'audio', 'application', 'text'] as const;

const answerable = (type: string) =>
  MEDIA_TYPE.test(type) && (FILE_TYPE_RANGES as readonly string[]).includes(type.split('/')[0]?.toLowerCase() ?? '');

export function createConversationMediaService(deps: {
  db: Kysely<DB>;
  platform: Pick<MessagingPlatform, 'downloadMedia'>;
  media: Pick<MediaFetcher, 'stream'>;
}) {
  const { db, platform, media } = deps;

  return {
    async download(orgId: string, conversationId: string, messageId: string): Promise<MediaFile> {
      const row = await repo.findMessageMedia(db, orgId, conversationId, messageId);
      const file = (row?.media ?? null) as MessageMedia | null;
      if (!row || !file) throw notFound();
      let download: MediaDownload;
      if (row.direction === 'inbound') {
        if (!row.platform_media_id) throw notFound();
        download = await platform.downloadMedia({
          phoneNumberId: row.phone_number_id,
          platformMediaId: row.platform_media_id,
        });
      } else if (file.file_id) {
        // D294: an uploaded file is answered from its stored bytes while it is kept.
        const stored = await fileBytes(db, orgId, file.file_id);
        if (!stored) {
          throw new ApiError(502, { code: 'media_not_found', source: 'file', message: 'the uploaded file expired' });
        }
        download = {
          ok: true,
          mimeType: stored.mime_type,
          contentLength: stored.bytes.length,
          body: new Blob([new Uint8Array(stored.bytes)]).stream(),
        };
      } else {
        // decisions (media endpoint): an outbound file is fetched again from the URL it was sent by.
        if (!file.url) throw notFound();
        download = await media.stream(file.url);
      }
      if (!download.ok) throw unavailable(download, row.direction === 'inbound' ? 'platform' : 'media_url');
      const contentType = answerable(download.mimeType) ? download.mimeType : 'application/octet-stream';
      return {
        contentType,
        ...(download.contentLength !== undefined ? { contentLength: download.contentLength } : {}),
        ...(file.filename ? { filename: file.filename } : {}),
        body: download.body,
      };
    },
  };
}

/**
 * Where the file should come from did not give it: 502 `media_not_found` when that side says the file is gone (a
 * platform's media expire; a URL can stop answering), 503 `media_unavailable` when it could not be reached or
 * refused for another reason (worth trying again later).
 */
function unavailable(failure: Extract<MediaDownload, { ok: false }>, source: 'platform' | 'media_url'): ApiError {
  return failure.reason === 'not_found'
    ? new ApiError(502, { code: 'media_not_found', source, message: failure.message })
    : new ApiError(503, { code: 'media_unavailable', source, message: failure.message }, { 'Retry-After': '5' });
}

export type ConversationMediaService = ReturnType<typeof createConversationMediaService>;
