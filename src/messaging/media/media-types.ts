// What each media surface accepts: its size limit (contract Limits) and the formats the platform takes,
// recognised by declared content type and by leading bytes.
// decisions §15: replies send audio too (up to 16 MB).
export type MediaKind = 'image' | 'video' | 'audio' | 'document';

export const MEDIA_SIZE_LIMITS: Record<MediaKind, number> = {
  image: 5 * 1024 * 1024,
  video: 16 * 1024 * 1024,
  audio: 16 * 1024 * 1024,
  document: 100 * 1024 * 1024,
};

const startsWith = (bytes: Buffer, signature: number[], offset = 0) =>
  bytes.length >= offset + signature.length && signature.every((byte, index) => bytes[offset + index] === byte);

const ascii = (text: string) => [...text].map((char) => char.charCodeAt(0));

/** The format the leading bytes show, or undefined when they match nothing we know. */
export function sniff(bytes: Buffer): { kind: MediaKind; format: string } | undefined {
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return { kind: 'image', format: 'jpeg' };
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { kind: 'image', format: 'png' };
  if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8)) return { kind: 'image', format: 'webp' };
  if (startsWith(bytes, ascii('ftyp'), 4)) {
    const brand = bytes.subarray(8, 12).toString('latin1');
    if (brand.startsWith('M4A')) return { kind: 'audio', format: 'mp4' };
    return { kind: 'video', format: brand.startsWith('3g') ? '3gpp' : 'mp4' };
  }
  // The platform's audio formats: MP3 (ID3 tag or frame sync), AAC (ADTS), AMR and OGG (Opus).
  if (startsWith(bytes, ascii('ID3'))) return { kind: 'audio', format: 'mpeg' };
  if (startsWith(bytes, ascii('OggS'))) return { kind: 'audio', format: 'ogg' };
  if (startsWith(bytes, ascii('#!AMR'))) return { kind: 'audio', format: 'amr' };
  if (bytes.length >= 2 && bytes[0] === 0xff && ((bytes[1] as number) & 0xf6) === 0xf0) {
    return { kind: 'audio', format: 'aac' };
  }
  if (bytes.length >= 2 && bytes[0] === 0xff && ((bytes[1] as number) & 0xe0) === 0xe0) {
    return { kind: 'audio', format: 'mpeg' };
  }
  if (startsWith(bytes, ascii('%PDF-'))) return { kind: 'document', format: 'pdf' };
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04])) return { kind: 'document', format: 'office-open-xml' };
  if (startsWith(bytes, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]))
    return { kind: 'document', format: 'ms-office' };
  return undefined;
}

/** The kind a declared Content-Type names (documents are application/* and text/plain). */
export function declaredKind(contentType: string | undefined): MediaKind | undefined {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type.startsWith('image/')) return 'image';
  if (type.startsWith('video/')) return 'video';
  if (type.startsWith('audio/')) return 'audio';
  if (type.startsWith('application/') || type === 'text/plain' || type === 'text/csv') return 'document';
  return undefined;
}
