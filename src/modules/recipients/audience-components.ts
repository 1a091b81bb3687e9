// decisions §16: an audience broadcast's send components, built once and filled per contact. The shared
// request is checked against the template with a stand-in contact whose every field and property holds a marker;
// the components built from it carry the markers where a named placeholder resolves from the contact. Each chunk
// of recipients reads the contact's values in its INSERT … SELECT (no contact goes through Node) and stores them
// with the recipient (D219); the fan-out puts them in where the markers are when it claims the recipient. A
// recipient lacking one of them is `failed` `missing_variables`, uncharged.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { TemplateComponent } from '../../messaging/platform.ts';
import { listProperties } from '../properties/properties.repo.ts';
import {
  buildSendComponents,
  type CatalogSendDefaults,
  contactFields,
  type RecipientContact,
  type RecipientInput,
  type SendRequirements,
  validateRecipientInput,
} from '../templates/send-requirements.ts';

// Private-use characters: never in a marker's neighbourhood by accident, and kept as they are by JSON.
const OPEN = '\uE000';
const CLOSE = '\uE001';
const marker = (source: string) => `${OPEN}${source}${CLOSE}`;
const MARKER = new RegExp(`${OPEN}([^${CLOSE}]+)${CLOSE}`, 'g');

/** A contact whose every field and property is its marker. */
function standIn(): RecipientContact {
  const contact: RecipientContact = Object.fromEntries(contactFields.map((field) => [field, marker(field)]));
  contact.properties = new Proxy(
    {},
    { get: (_target, key) => (typeof key === 'string' ? { value_text: marker(`properties.${key}`) } : undefined) },
  );
  return contact;
}

/** The shared request against the template: the first refusal, or the components with the contact's markers. */
export function audienceComponents(
  requirements: SendRequirements,
  components: readonly TemplateComponent[],
  input: RecipientInput,
  catalogSendDefaults: CatalogSendDefaults | null,
) {
  const checked = validateRecipientInput(requirements, input, standIn());
  if (!checked.ok) return checked;
  const built = buildSendComponents(components, checked.parameters, { catalogSendDefaults });
  const text = JSON.stringify(built);
  const sources = [...new Set([...text.matchAll(MARKER)].map((match) => match[1] as string))];
  return { ok: true as const, parameters: checked.parameters, components: built, sources };
}

/** A contact source (`first_name`, `properties.tier`) with what SQL needs to read it. */
export interface ContactToken {
  source: string;
  property?: { id: string; kind: string };
}

/** Resolves the sources' property keys to their definitions (a property deleted since resolves to nothing). */
export async function contactTokens(db: Kysely<DB>, orgId: string, sources: string[]): Promise<ContactToken[]> {
  if (!sources.some((source) => source.startsWith('properties.'))) return sources.map((source) => ({ source }));
  const byKey = new Map((await listProperties(db, orgId)).map((row) => [row.key, row]));
  return sources.map((source) => {
    if (!source.startsWith('properties.')) return { source };
    const definition = byKey.get(source.slice('properties.'.length));
    return definition ? { source, property: { id: definition.id, kind: definition.kind } } : { source };
  });
}

// The text a property value shows in a message (recipient-input.ts `propertyText`), in SQL.
function propertyText(kind: string): RawBuilder<string> {
  switch (kind) {
    case 'FILE':
    case 'MULTI_FILE':
      return sql`null::text`;
    case 'NUMBER':
    case 'MONEY':
      return sql`trim_scale(pv.value_number)::text`;
    case 'BOOLEAN':
      return sql`pv.value_bool::text`;
    case 'DATE':
      return sql`to_char(pv.value_date, 'YYYY-MM-DD')`;
    case 'MULTI_SELECT':
      return sql`(select string_agg(x, ', ') from jsonb_array_elements_text(pv.value_json) x)`;
    default:
      return sql`coalesce(pv.value_text, trim_scale(pv.value_number)::text, to_char(pv.value_date, 'YYYY-MM-DD'))`;
  }
}

/** The token's value for contact `c`, null when blank (the platform refuses empty parameters). */
export function tokenValue(token: ContactToken): RawBuilder<string | null> {
  let value: RawBuilder<unknown>;
  if (!token.source.startsWith('properties.')) {
    value = sql.ref(`c.${token.source}`);
  } else if (!token.property) {
    value = sql`null::text`;
  } else {
    value = sql`(select ${propertyText(token.property.kind)} from contact_property_values pv
      where pv.org_id = c.org_id and pv.contact_id = c.id and pv.property_id = ${token.property.id})`;
  }
  return sql`(select case when btrim(v) <> '' then v end from (select ${value} as v) t)`;
}

/** The recipient's values over the chunk row `alias`, whose columns `t0`, `t1`… hold the tokens' values (D219). */
export function tokenValues(tokens: readonly ContactToken[], alias: string): RawBuilder<(string | null)[]> {
  if (tokens.length === 0) return sql`'{}'::text[]`;
  return sql`array[${sql.join(tokens.map((_, index) => sql.ref(`${alias}.t${index}`)))}]::text[]`;
}

/**
 * D219: a broadcast's filler of its recipients' send components: the base components with each token's marker
 * replaced by the recipient's value as JSON string content (a missing value: empty; such a recipient is failed at
 * once and never sent).
 */
export function componentsFiller(base: unknown, tokens: readonly ContactToken[]) {
  const text = JSON.stringify(base);
  const markers = tokens.map((token) => marker(token.source));
  return (values: readonly (string | null)[]): unknown => {
    let filled = text;
    for (const [index, found] of markers.entries()) {
      const content = JSON.stringify(values[index] ?? '').slice(1, -1);
      // A function, not a replacement string: a value's `$&` or `$1` is text, not a pattern.
      filled = filled.replaceAll(found, () => content);
    }
    return JSON.parse(filled);
  };
}
