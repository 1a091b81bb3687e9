// decisions §19 (D294): files attached from the computer. The bytes are checked as a fetched media URL would be
// (the type its name or `mime_type` declares, the same leading bytes, the same size limit per kind) and kept in the
// database, keyed by organization, until they expire; a reply in the organization refers to one by `file_id`.
import { type Kysely, sql } from 'kysely';
import mime from 'mime-types';
import type { DB } from '../../db/schema.ts';
import { ApiError, notFound, validationError } from '../../http/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import { declaredKind, MEDIA_SIZE_LIMITS, type MediaKind, sniff } from '../../messaging/media/media-types.ts';
import { FILE_TTL_MS } from './files.schemas.ts';

export interface FileUploadInput {
  filename: string;
  mime_type?: string | undefined;
  data: string;
}

export interface StoredFile {
  id: string;
  type: MediaKind;
  mime_type: string;
  filename: string;
  size: number;
  created_at: Date;
  expires_at: Date;
}

/** Base64 with padding: the alphabet, at most two `=` at the end, a multiple of 4 long (one pass, no backtracking). */
const isBase64 = (text: string) => text.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(text);

/** The bytes' check, as for a media URL (media-fetcher.ts): kind by declared type, leading bytes, size limit. */
export function checkFile(
  bytes: Buffer,
  mimeType: string,
): { ok: true; kind: MediaKind } | { ok: false; error: ApiError } {
  const kind = declaredKind(mimeType);
  if (!kind) {
    return {
      ok: false,
      error: new ApiError(422, {
        code: 'media_type_mismatch',
        reason: `${mimeType} is not an image, video, audio or document type`,
      }),
    };
  }
  const limit = MEDIA_SIZE_LIMITS[kind];
  if (bytes.length > limit) {
    return {
      ok: false,
      error: new ApiError(422, {
        code: 'media_too_large',
        reason: `${bytes.length} bytes; the ${kind} limit is ${limit}`,
        limit,
      }),
    };
  }
  const sniffed = sniff(bytes.subarray(0, 16));
  const plainTextDocument = kind === 'document' && /^text\/(plain|csv)$/i.test(mimeType);
  if (!plainTextDocument && sniffed?.kind !== kind) {
    return {
      ok: false,
      error: new ApiError(422, {
        code: 'media_type_mismatch',
        reason: `declared ${mimeType}, but the bytes are ${sniffed ? `${sniffed.format} content` : 'of no type the platform takes'}`,
      }),
    };
  }
  return { ok: true, kind };
}

const columns = ['id', 'kind as type', 'mime_type', 'filename', 'size', 'created_at', 'expires_at'] as const;

export function createFilesService(deps: { db: Kysely<DB>; clock: Clock }) {
  const { db, clock } = deps;
  return {
    async upload(orgId: string, userId: string | null, body: FileUploadInput): Promise<StoredFile> {
      if (!isBase64(body.data)) {
        throw validationError(['body', 'data'], 'Not base64 (RFC 4648, with padding)', 'value_error', {});
      }
      const declared = body.mime_type ?? mime.lookup(body.filename);
      if (!declared) {
        throw validationError(['body', 'mime_type'], 'The file name tells no type: give mime_type', 'missing', {});
      }
      const mimeType = declared.toLowerCase();
      const bytes = Buffer.from(body.data, 'base64');
      const checked = checkFile(bytes, mimeType);
      if (!checked.ok) throw checked.error;
      const now = clock.now();
      const row = {
        org_id: orgId,
        id: newId('file'),
        kind: checked.kind,
        mime_type: mimeType,
        filename: body.filename,
        size: bytes.length,
        bytes,
        created_by: userId,
        created_at: now,
        expires_at: new Date(now.getTime() + FILE_TTL_MS),
      };
      await db.insertInto('uploaded_files').values(row).execute();
      return {
        id: row.id,
        type: row.kind,
        mime_type: mimeType,
        filename: row.filename,
        size: row.size,
        created_at: now,
        expires_at: row.expires_at,
      };
    },

    async get(orgId: string, fileId: string): Promise<StoredFile> {
      const row = await findFile(db, orgId, fileId, clock.now());
      if (!row) throw notFound();
      return row;
    },
  };
}

/** An unexpired file of the organization (its description, not its bytes). */
export async function findFile(db: Kysely<DB>, orgId: string, fileId: string, now: Date) {
  const row = await db
    .selectFrom('uploaded_files')
    .select(columns)
    .where('org_id', '=', orgId)
    .where('id', '=', fileId)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row as StoredFile | undefined;
}

/** A file's bytes while they are kept (retention removes them within an hour of `expires_at`). */
export async function fileBytes(db: Kysely<DB>, orgId: string, fileId: string) {
  const row = await db
    .selectFrom('uploaded_files')
    .select(['bytes', 'mime_type', 'filename'])
    .where('org_id', '=', orgId)
    .where('id', '=', fileId)
    .executeTakeFirst();
  return row ? { ...row, bytes: Buffer.from(row.bytes) } : undefined;
}

/** D294 retention: removes up to `batch` expired files; answers how many. */
export async function pruneExpiredFiles(db: Kysely<DB>, now: Date, batch: number): Promise<number> {
  const result = await sql`delete from uploaded_files where (org_id, id) in (
      select org_id, id from uploaded_files where expires_at <= ${now} order by expires_at limit ${batch})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

export type FilesService = ReturnType<typeof createFilesService>;
