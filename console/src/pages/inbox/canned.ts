// A canned response filled for a contact (decisions §19: the console fills `{{contact.first_name}}`,
// `{{contact.last_name}}` and `{{contact.properties.KEY}}` from the contact when inserting it; D277). Pure, so the
// reply box can fill as the person picks a response.
import type { Contact, Property } from '@crm-messaging/sdk';

/** What a canned response reads from: the contact's names and, when known, its custom properties. */
export type CannedContact = Pick<Contact, 'first_name' | 'last_name'> & Partial<Pick<Contact, 'properties'>>;
type Stored = NonNullable<Contact['properties']>[string];

// Spaces inside the braces are allowed (`{{ contact.first_name }}`), as people type them; a property key is the API's
// key (letters, digits, `_`, `-`).
const PLACEHOLDER = /\{\{\s*contact\.(first_name|last_name|properties\.([A-Za-z0-9_-]+))\s*\}\}/g;

/** A stored property value as a person reads it: option labels when the properties are given, dates as stored. */
function propertyText(stored: Stored | undefined, property: Property | undefined): string {
  if (!stored) return '';
  const label = (key: string) => property?.options.find((option) => option.key === key)?.label ?? key;
  switch (stored.kind) {
    case 'NUMBER':
      return stored.value_number === null ? '' : String(stored.value_number);
    case 'MONEY':
      return stored.value_number === null
        ? ''
        : `${stored.value_number}${property?.currency ? ` ${property.currency}` : ''}`;
    case 'BOOLEAN':
      return stored.value_bool === null ? '' : stored.value_bool ? 'Yes' : 'No';
    case 'DATE':
      return stored.value_date ?? '';
    case 'RADIO':
    case 'DROPDOWN':
      return stored.value_text ? label(stored.value_text) : '';
    case 'MULTI_SELECT':
      return Array.isArray(stored.value_json) ? (stored.value_json as string[]).map(label).join(', ') : '';
    case 'FILE':
    case 'MULTI_FILE':
      return Array.isArray(stored.value_json)
        ? (stored.value_json as { url?: unknown; name?: unknown }[])
            .map((file) => (typeof file?.name === 'string' ? file.name : typeof file?.url === 'string' ? file.url : ''))
            .filter(Boolean)
            .join(', ')
        : '';
    default:
      return stored.value_text ?? '';
  }
}

/**
 * The text with each placeholder replaced by the contact's value. A value the contact does not have becomes empty
 * (never the placeholder itself, which would reach the contact as braces); other `{{…}}` text is left as written.
 * `properties` (the organization's definitions) turn option keys into their labels.
 */
export function fillCannedResponse(text: string, contact: CannedContact, properties: Property[] = []): string {
  return text.replace(PLACEHOLDER, (_match, field: string, key: string | undefined) => {
    if (field === 'first_name') return contact.first_name ?? '';
    if (field === 'last_name') return contact.last_name ?? '';
    const property = properties.find((candidate) => candidate.key === key);
    return propertyText(key === undefined ? undefined : contact.properties?.[key], property);
  });
}

/** The placeholders of `text` the contact has no value for (to warn before sending), each once, in order. */
export function unfilledPlaceholders(text: string, contact: CannedContact): string[] {
  const missing: string[] = [];
  for (const match of text.matchAll(PLACEHOLDER)) {
    const [whole, field, key] = match;
    const empty =
      field === 'first_name'
        ? !contact.first_name
        : field === 'last_name'
          ? !contact.last_name
          : !propertyText(key === undefined ? undefined : contact.properties?.[key], undefined);
    const name = whole.replace(/\s+/g, '');
    if (empty && !missing.includes(name)) missing.push(name);
  }
  return missing;
}
