// A template's send fields by name (decisions §7, §15, §16): its placeholders as the template shows them, link
// suffixes, header media, a coupon, a limited-time offer's expiry, and a carousel's cards (each card's media, body
// variables and link buttons together, D165), and a preview filled with the values. Built from the template's send
// requirements (GET /v1/templates/{id}/send-requirements), never from a second reading of its components. Shared by
// a new broadcast and a template reply in the inbox, so both ask for the same things in the same words; the server
// is the one judge.
import type { SendRequirements } from '@crm-messaging/sdk';
import { TextInput } from './fields.tsx';
import { useSession, useTime } from './session.tsx';
import { utcToZonedInput, zonedToUtc } from './time.ts';

type Variable = SendRequirements['variables'][number];
type Suffix = SendRequirements['url_suffixes'][number];
type Media = SendRequirements['media'][number];

export interface TemplateValues {
  variables: Record<string, string>;
  url_suffixes: Record<string, string>;
  header_media_url: string;
  /** Carousel card header media by card index (`"0"`). */
  card_media_urls: Record<string, string>;
  coupon_code: string;
  /** A limited-time offer's end as a `datetime-local` value, in the organization's timezone. */
  lto_expiration: string;
}

export const NO_TEMPLATE_VALUES: TemplateValues = {
  variables: {},
  url_suffixes: {},
  header_media_url: '',
  card_media_urls: {},
  coupon_code: '',
  lto_expiration: '',
};

/** `body {{1}}`, `header {{first_name}}`, `card 1 body {{2}}`: a token as the template shows it. */
export function placeholderLabel(variable: Variable): string {
  const card = variable.card_index === null ? '' : `Card ${variable.card_index + 1} `;
  const component = variable.component === 'header' ? 'Header' : 'Body';
  return `${card}${card ? component.toLowerCase() : component} {{${variable.placeholder}}}`;
}

/** A text with each placeholder filled by its value (or left as `{{…}}`); `prefix` is the token's start. */
export function previewOf(text: string, prefix: string, values: Record<string, string>): string {
  return text.replace(/\{\{\s*([a-z0-9_]+)\s*\}\}/g, (match, placeholder: string) => {
    const value = values[`${prefix}.${placeholder}`];
    return value ? value : match;
  });
}

type Component = { type?: string; text?: string; format?: string; cards?: { components?: Component[] }[] };

function componentOf(components: unknown, type: string): Component | undefined {
  if (!Array.isArray(components)) return undefined;
  return (components as Component[]).find((c) => c.type?.toUpperCase() === type);
}

export function componentText(components: unknown, type: string): string | undefined {
  return componentOf(components, type)?.text;
}

/** The cards' indexes that the requirements name, in order. */
function cardIndexes(req: SendRequirements): number[] {
  const indexes = new Set<number>();
  for (const item of [...req.variables, ...req.url_suffixes, ...req.media])
    if (item.card_index !== null) indexes.add(item.card_index);
  return [...indexes].sort((a, b) => a - b);
}

const cardMediaIndex = (media: Media): string | undefined => /^card\.(\d+)\.header\.media$/.exec(media.token)?.[1];

/** The send fields of a request body: only what the template asks for and was filled. */
export function sendFieldsOf(
  values: TemplateValues,
  requirements: SendRequirements | undefined,
  timeZone: string,
): Partial<{
  variables: Record<string, string>;
  url_suffixes: Record<string, string>;
  header_media_url: string;
  card_media_urls: Record<string, string>;
  coupon_code: string;
  lto_expiration: string;
}> {
  const fields: ReturnType<typeof sendFieldsOf> = {};
  const variables = Object.fromEntries(
    Object.entries(values.variables).filter(
      ([token, value]) => value && requirements?.variables.some((v) => v.token === token),
    ),
  );
  if (Object.keys(variables).length > 0) fields.variables = variables;
  const suffixes = Object.fromEntries(
    Object.entries(values.url_suffixes).filter(
      ([key, value]) => value && requirements?.url_suffixes.some((s) => s.key === key),
    ),
  );
  if (Object.keys(suffixes).length > 0) fields.url_suffixes = suffixes;
  if (values.header_media_url && requirements?.media.some((m) => m.token === 'header.media'))
    fields.header_media_url = values.header_media_url;
  // By card index as an object (the API takes an array or an object): a card left empty is simply not there.
  const cards = Object.fromEntries(
    Object.entries(values.card_media_urls).filter(
      ([index, url]) => url && requirements?.media.some((m) => cardMediaIndex(m) === index),
    ),
  );
  if (Object.keys(cards).length > 0) fields.card_media_urls = cards;
  if (values.coupon_code && requirements?.coupon_code.required) fields.coupon_code = values.coupon_code;
  // The time as typed when it is not a full date and time: the server's 422 says what is wrong with it.
  if (values.lto_expiration && requirements?.limited_time_offer.expiration_required)
    fields.lto_expiration = zonedToUtc(values.lto_expiration, timeZone) ?? values.lto_expiration;
  return fields;
}

interface FieldErrors {
  fieldError: (name: string) => string | undefined;
  fieldErrorUnder: (name: string) => string | undefined;
}

const MEDIA_NAMES = { image: 'image', video: 'video', document: 'document' } as const;

/** The inputs a template asks for; `describe` says where a variable's value goes (every contact, this one…). */
export function TemplateFields({
  requirements,
  values,
  onChange,
  errors,
  describe,
}: {
  requirements: SendRequirements;
  values: TemplateValues;
  onChange: (values: TemplateValues) => void;
  errors: FieldErrors;
  describe: (variable: Variable) => string | undefined;
}) {
  const { organization } = useSession();
  const set = <K extends keyof TemplateValues>(key: K, value: TemplateValues[K]) =>
    onChange({ ...values, [key]: value });
  const req = requirements;
  // A field's message: a 422 at its place in the body, or a 422 `missing_variables` naming its token.
  const errorAt = (bodyPath: string, token: string) =>
    errors.fieldErrorUnder(bodyPath) ?? errors.fieldError(`variables.${token}`);

  const variableField = (variable: Variable) => (
    <TextInput
      key={variable.token}
      label={placeholderLabel(variable)}
      name={`variables.${variable.token}`}
      value={values.variables[variable.token] ?? ''}
      onChange={(value) => set('variables', { ...values.variables, [variable.token]: value })}
      description={describe(variable)}
      error={errors.fieldError(`variables.${variable.token}`) ?? errors.fieldError('variables')}
    />
  );
  const suffixField = (suffix: Suffix) => {
    const card = suffix.card_index === null ? '' : `Card ${suffix.card_index + 1} link`;
    return (
      <TextInput
        key={suffix.key}
        label={`${card ? card : 'Link'} suffix of button ${suffix.button_index + 1}`}
        name={`url_suffixes.${suffix.key}`}
        description={`Appended to ${suffix.url}${suffix.example ? ` (for example ${suffix.example})` : ''}`}
        value={values.url_suffixes[suffix.key] ?? ''}
        onChange={(value) => set('url_suffixes', { ...values.url_suffixes, [suffix.key]: value })}
        error={errorAt(`url_suffixes.${suffix.key}`, suffix.card_index === null ? `button.${suffix.key}` : suffix.key)}
      />
    );
  };
  const headerMedia = req.media.find((m) => m.token === 'header.media');
  const cards = cardIndexes(req);
  const topVariables = req.variables.filter((v) => v.card_index === null);
  const topSuffixes = req.url_suffixes.filter((s) => s.card_index === null);
  const nothing =
    req.variables.length + req.url_suffixes.length + req.media.length === 0 &&
    !req.coupon_code.required &&
    !req.limited_time_offer.expiration_required;
  return (
    <>
      {nothing ? <p className="muted">This template has no variables.</p> : null}
      {headerMedia ? (
        <TextInput
          label={`Header ${MEDIA_NAMES[headerMedia.type]} URL`}
          name="header_media_url"
          type="url"
          description={`A public link to the ${MEDIA_NAMES[headerMedia.type]}, up to ${megabytes(headerMedia.max_bytes)}.`}
          value={values.header_media_url}
          onChange={(value) => set('header_media_url', value)}
          error={errorAt('header_media_url', 'header.media')}
        />
      ) : null}
      {topVariables.map(variableField)}
      {topSuffixes.map(suffixField)}
      {req.coupon_code.required ? (
        <TextInput
          label="Coupon code"
          name="coupon_code"
          value={values.coupon_code}
          onChange={(value) => set('coupon_code', value)}
          error={errorAt('coupon_code', 'coupon_code')}
        />
      ) : null}
      {req.limited_time_offer.expiration_required ? (
        <TextInput
          label={`Offer ends (${organization.timezone} time)`}
          name="lto_expiration"
          type="datetime-local"
          description={`The limited-time offer's countdown ends then, in the organization's timezone. It is now ${utcToZonedInput(new Date(), organization.timezone).replace('T', ' ')} there.`}
          value={values.lto_expiration}
          onChange={(value) => set('lto_expiration', value)}
          error={errorAt('lto_expiration', 'lto_expiration')}
        />
      ) : null}
      {cards.map((index) => {
        const media = req.media.find((m) => m.card_index === index);
        return (
          <fieldset key={index} className="card-fields">
            <legend>Card {index + 1}</legend>
            {media ? (
              <TextInput
                label={`Card ${index + 1} ${MEDIA_NAMES[media.type]} URL`}
                name={`card_media_urls.${index}`}
                type="url"
                description={`A public link to the card's ${MEDIA_NAMES[media.type]}, up to ${megabytes(media.max_bytes)}.`}
                value={values.card_media_urls[String(index)] ?? ''}
                onChange={(value) => set('card_media_urls', { ...values.card_media_urls, [String(index)]: value })}
                error={errorAt(`card_media_urls.${index}`, media.token)}
              />
            ) : null}
            {req.variables.filter((v) => v.card_index === index).map(variableField)}
            {req.url_suffixes.filter((s) => s.card_index === index).map(suffixField)}
          </fieldset>
        );
      })}
    </>
  );
}

function megabytes(bytes: number): string {
  return `${Math.round(bytes / (1024 * 1024))} MB`;
}

/** The template's header, offer, body and cards with the values filled in. */
export function TemplatePreview({ components, values }: { components: unknown; values: TemplateValues }) {
  const header = componentOf(components, 'HEADER');
  const body = componentText(components, 'BODY');
  const offer = componentOf(components, 'LIMITED_TIME_OFFER') as { limited_time_offer?: { text?: string } } | undefined;
  const carousel = componentOf(components, 'CAROUSEL');
  const { organization } = useSession();
  const time = useTime();
  const ends = zonedToUtc(values.lto_expiration, organization.timezone);
  if (!body) return <div className="preview muted">Choose a template to see its message.</div>;
  return (
    <div className="preview">
      {header?.text ? <strong>{previewOf(header.text, 'header', values.variables)}</strong> : null}
      {header?.format && header.format.toUpperCase() !== 'TEXT' ? (
        <span className="muted">[{header.format.toLowerCase()}]</span>
      ) : null}
      {header ? '\n' : ''}
      {offer?.limited_time_offer?.text ? (
        <>
          <strong>{offer.limited_time_offer.text}</strong>
          {ends ? ` (ends ${time(ends)})` : ''}
          {'\n'}
        </>
      ) : null}
      {previewOf(body, 'body', values.variables)}
      {carousel?.cards?.length ? (
        <ol className="preview-cards" aria-label="Cards">
          {carousel.cards.map((card, index) => {
            const text = componentText(card.components, 'BODY');
            // biome-ignore lint/suspicious/noArrayIndexKey: a card is its position in the carousel
            return <li key={index}>{text ? previewOf(text, `card.${index}.body`, values.variables) : null}</li>;
          })}
        </ol>
      ) : null}
    </div>
  );
}
