// One recipient of a send, checked against a template's requirements. Answers the contract's first refusal for
// that recipient (unknown keys before missing values, decisions §7), or every value the send needs, resolved.

import type { Static } from 'typebox';
import type { SendRecipient } from './recipient-input.schemas.ts';
import type { SendRequirements } from './send-requirements.schemas.ts';

/** What a recipient carries for the template (its address, `contact_id` or `phone`, is the send's business). */
export type RecipientInput = Omit<Static<typeof SendRecipient>, 'contact_id' | 'phone'>;

export interface PropertyValueLike {
  kind?: string;
  value_text?: string | null;
  value_number?: number | null;
  value_bool?: boolean | null;
  value_date?: string | null;
  value_json?: unknown;
}

export interface RecipientContact {
  first_name?: string | null;
  last_name?: string | null;
  email?: string | null;
  phone?: string | null;
  city?: string | null;
  country?: string | null;
  /** Keyed by property key (decisions §5). */
  properties?: Record<string, PropertyValueLike> | null;
}

export interface ResolvedParameters {
  /** Every variable token to its text. */
  variables: Record<string, string>;
  /** Every URL suffix key to its suffix. */
  url_suffixes: Record<string, string>;
  /** Every media token (`header.media`, `card.N.header.media`) to its URL. */
  media: Record<string, string>;
  coupon_code: string | null;
  lto_expiration_ms: number | null;
}

export type RecipientError =
  | { code: 'unknown_variables'; keys: string[] }
  | { code: 'unknown_url_suffixes'; keys: string[] }
  | { code: 'missing_variables'; tokens: string[] };

export type RecipientCheck = { ok: true; parameters: ResolvedParameters } | { ok: false; error: RecipientError };

export function validateRecipientInput(
  requirements: SendRequirements,
  recipient: RecipientInput,
  contact: RecipientContact | null,
): RecipientCheck {
  const variables = recipient.variables ?? {};
  const suffixes = recipient.url_suffixes ?? {};
  const media = mediaInput(recipient);
  const variableTokens = new Set(requirements.variables.map((v) => v.token));
  const mediaTokens = new Set(requirements.media.map((m) => m.token));

  // Media tokens are accepted in `variables` too, since `missing_variables` names them there.
  const unknownVariables = [
    ...Object.keys(variables).filter((key) => !variableTokens.has(key) && !mediaTokens.has(key)),
    ...Object.keys(media).filter((key) => !mediaTokens.has(key)),
  ];
  if (unknownVariables.length > 0) return refuse({ code: 'unknown_variables', keys: unique(unknownVariables) });
  const suffixKeys = new Set(requirements.url_suffixes.map((s) => s.key));
  const unknownSuffixes = Object.keys(suffixes).filter((key) => !suffixKeys.has(key));
  if (unknownSuffixes.length > 0) return refuse({ code: 'unknown_url_suffixes', keys: unknownSuffixes });

  const missing: string[] = [];
  const parameters: ResolvedParameters = {
    variables: {},
    url_suffixes: {},
    media: {},
    coupon_code: null,
    lto_expiration_ms: null,
  };
  for (const variable of requirements.variables) {
    // An explicit value wins over the contact's, so a send can override a stored name.
    const value = filled(variables[variable.token]) ?? fromContact(variable.resolves_from, contact);
    if (value === undefined) missing.push(variable.token);
    else parameters.variables[variable.token] = value;
  }
  for (const surface of requirements.media) {
    const url = filled(media[surface.token]) ?? filled(variables[surface.token]);
    if (url === undefined) missing.push(surface.token);
    else parameters.media[surface.token] = url;
  }
  for (const suffix of requirements.url_suffixes) {
    const value = filled(suffixes[suffix.key]);
    if (value === undefined) missing.push(suffix.card_index === null ? `button.${suffix.key}` : suffix.key);
    else parameters.url_suffixes[suffix.key] = value;
  }
  if (requirements.coupon_code.required) {
    const code = filled(recipient.coupon_code);
    if (code === undefined) missing.push('coupon_code');
    else parameters.coupon_code = code;
  }
  if (requirements.limited_time_offer.expiration_required) {
    const expiration = expirationMs(recipient.lto_expiration);
    if (expiration === undefined) missing.push('lto_expiration');
    else parameters.lto_expiration_ms = expiration;
  }
  if (missing.length > 0) return refuse({ code: 'missing_variables', tokens: missing });
  return { ok: true, parameters };
}

function refuse(error: RecipientError): RecipientCheck {
  return { ok: false, error };
}

function mediaInput(recipient: RecipientInput): Record<string, unknown> {
  const media: Record<string, unknown> = {};
  if (recipient.header_media_url !== undefined && recipient.header_media_url !== null) {
    media['header.media'] = recipient.header_media_url;
  }
  const cards = recipient.card_media_urls;
  if (cards) {
    const entries: [string, unknown][] = Array.isArray(cards)
      ? cards.map((url, index) => [String(index), url])
      : Object.entries(cards);
    // A null entry is a hole in the array (a card left to fail as missing), not a key the template does not use.
    for (const [index, url] of entries)
      if (url !== null && url !== undefined) media[`card.${index}.header.media`] = url;
  }
  return media;
}

// The platform refuses empty text parameters, so a blank value counts as not given.
function filled(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

function fromContact(source: string | null, contact: RecipientContact | null): string | undefined {
  if (source === null || contact === null) return undefined;
  if (source.startsWith('properties.')) {
    const value = contact.properties?.[source.slice('properties.'.length)];
    return value ? filled(propertyText(value)) : undefined;
  }
  return filled(contact[source as keyof Omit<RecipientContact, 'properties'>]);
}

/** The text a property value shows in a message; file kinds have none. */
export function propertyText(value: PropertyValueLike): string | undefined {
  switch (value.kind) {
    case 'FILE':
    case 'MULTI_FILE':
      return undefined;
    case 'NUMBER':
    case 'MONEY':
      return numberText(value.value_number);
    case 'BOOLEAN':
      return typeof value.value_bool === 'boolean' ? String(value.value_bool) : undefined;
    case 'DATE':
      return value.value_date ?? undefined;
    case 'MULTI_SELECT':
      return Array.isArray(value.value_json)
        ? value.value_json.filter((v) => typeof v === 'string').join(', ')
        : undefined;
    default:
      return value.value_text ?? numberText(value.value_number) ?? value.value_date ?? undefined;
  }
}

function numberText(value: number | null | undefined): string | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined;
}

function expirationMs(value: string | number | null | undefined): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? undefined : parsed;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
