// Custom property values by kind (decisions §6): how a stored value reads, and the patch an edited string makes.
import type { Contact, ContactPatch, Property } from '@crm-messaging/sdk';

type Stored = NonNullable<Contact['properties']>[string];
type Patch = NonNullable<NonNullable<ContactPatch['properties']>[string]>;
/** A stored file reference (decisions §6: `FILE` and `MULTI_FILE` hold `[{url, name?, mime_type?, size?}]`). */
type FileRef = { url: string; name?: string; mime_type?: string; size?: number };

/** The files of a stored value; anything else in `value_json` is ignored. */
function filesOf(stored: Stored | undefined): FileRef[] {
  const value = stored?.value_json;
  return Array.isArray(value)
    ? value.filter((file): file is FileRef => typeof (file as FileRef | null)?.url === 'string')
    : [];
}

export function readValue(property: Property, stored: Stored | undefined): string {
  if (!stored) return '';
  switch (property.kind) {
    case 'NUMBER':
    case 'MONEY':
      return stored.value_number === null ? '' : String(stored.value_number);
    case 'BOOLEAN':
      return stored.value_bool === null ? '' : stored.value_bool ? 'true' : 'false';
    case 'DATE':
      return stored.value_date ?? '';
    case 'MULTI_SELECT':
      return Array.isArray(stored.value_json) ? (stored.value_json as string[]).join(', ') : '';
    case 'FILE':
    case 'MULTI_FILE':
      // Edited as their URLs (D168).
      return filesOf(stored)
        .map((file) => file.url)
        .join(', ');
    default:
      return stored.value_text ?? '';
  }
}

/** The shown value: option labels instead of keys. */
export function showValue(property: Property, stored: Stored | undefined): string {
  if (property.kind === 'FILE' || property.kind === 'MULTI_FILE') {
    const files = filesOf(stored);
    return files.length > 0 ? files.map((file) => file.name ?? file.url).join(', ') : '—';
  }
  const raw = readValue(property, stored);
  if (!raw) return '—';
  const label = (key: string) => property.options.find((option) => option.key === key)?.label ?? key;
  if (property.kind === 'MULTI_SELECT') return raw.split(', ').map(label).join(', ');
  if (property.kind === 'RADIO' || property.kind === 'DROPDOWN') return label(raw);
  if (property.kind === 'MONEY' && property.currency) return `${raw} ${property.currency}`;
  if (property.kind === 'BOOLEAN') return raw === 'true' ? 'Yes' : 'No';
  return raw;
}

/**
 * The patch for an edited value; an empty string removes the value. The server checks the rest (422 at `loc`).
 * Files are edited as URLs: a URL already stored keeps its name, type and size (D168).
 */
export function patchValue(property: Property, text: string, stored?: Stored): Patch | null {
  if (text.trim() === '') return null;
  const kind = property.kind as Patch['kind'];
  switch (property.kind) {
    case 'FILE':
    case 'MULTI_FILE': {
      const kept = new Map(filesOf(stored).map((file) => [file.url, file]));
      const urls = text
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
      return { kind, value_json: urls.map((url) => kept.get(url) ?? { url }) };
    }
    case 'NUMBER':
    case 'MONEY':
      return { kind, value_number: Number(text) };
    case 'BOOLEAN':
      return { kind, value_bool: text === 'true' };
    case 'DATE':
      return { kind, value_date: text };
    case 'MULTI_SELECT':
      return {
        kind,
        value_json: text
          .split(',')
          .map((item) => item.trim())
          .filter(Boolean),
      };
    default:
      return { kind, value_text: text };
  }
}
