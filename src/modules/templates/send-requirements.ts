// What a template needs before it can be sent (GET /v1/templates/{id}/send-requirements), and the per-recipient
// checks and send building that follow from it. Pure: no storage, no HTTP. This file is the module's front door;
// the pieces live beside it (model, schemas, recipient checks, send building, authoring checks).

import type { TemplateComponent } from '../../messaging/platform.ts';
import type {
  CatalogSendDefaults,
  CatalogSlot,
  MediaSurface,
  SendRequirements,
  TemplateVariable,
  UrlSuffix,
} from './send-requirements.schemas.ts';
import {
  type ButtonModel,
  isPositional,
  type Placeholder,
  readTemplate,
  type TemplateModel,
} from './template-model.ts';

export { type RecipientContact, type RecipientInput, validateRecipientInput } from './recipient-input.ts';
export { buildSendComponents } from './send-components.ts';
export * from './send-requirements.schemas.ts';
export { type TemplateProblem, validateTemplateComponents } from './template-components-validation.ts';

/** decisions §7: these contact fields fill a named placeholder of the same name. */
export const contactFields = ['first_name', 'last_name', 'email', 'phone', 'city', 'country'] as const;

/** public-api Limits: media size for `header_media_url`. */
export const mediaMaxBytes = { image: 5 * 1024 * 1024, video: 16 * 1024 * 1024, document: 100 * 1024 * 1024 } as const;

// Card buttons the platform lets a send fill (or that need nothing); anything else makes the carousel unsendable.
const fillableCardButtons = new Set(['QUICK_REPLY', 'URL', 'PHONE_NUMBER']);

export interface AnalyzeOptions {
  /** The organization's custom property keys: a named placeholder equal to one resolves from the contact. */
  propertyKeys: readonly string[];
  catalogSendDefaults?: CatalogSendDefaults | null;
}

export function analyzeTemplate(components: readonly TemplateComponent[], options: AnalyzeOptions): SendRequirements {
  const model = readTemplate(components);
  const variables = [
    ...model.headerPlaceholders.map((p) => toVariable(p, 'header', null, options)),
    ...model.bodyPlaceholders.map((p) => toVariable(p, 'body', null, options)),
    ...(model.cards ?? []).flatMap((card) =>
      card.bodyPlaceholders.map((p) => toVariable(p, 'body', card.index, options)),
    ),
  ];
  const copyCode = model.buttons.find((button) => button.type === 'COPY_CODE');
  return {
    parameter_format: parameterFormat(variables),
    variables,
    contact_resolvable_tokens: variables.filter((v) => v.resolves_from !== null).map((v) => v.token),
    url_suffixes: urlSuffixes(model),
    media: mediaSurfaces(model),
    catalog_slots: catalogSlots(model.buttons),
    coupon_code: { required: copyCode !== undefined, button_index: copyCode?.index ?? null },
    limited_time_offer: {
      present: model.limitedTimeOffer !== null,
      expiration_required: model.limitedTimeOffer?.hasExpiration ?? false,
    },
    never_sendable_reason: neverSendableReason(model, options),
  };
}

function toVariable(
  placeholder: Placeholder,
  component: 'header' | 'body',
  cardIndex: number | null,
  options: AnalyzeOptions,
): TemplateVariable {
  return {
    token: placeholder.token,
    component,
    card_index: cardIndex,
    placeholder: placeholder.name,
    example: placeholder.example,
    resolves_from: resolvesFrom(placeholder.name, options.propertyKeys),
  };
}

// Positional placeholders never resolve on their own: {{1}} says nothing about what it holds.
function resolvesFrom(name: string, propertyKeys: readonly string[]): string | null {
  if (isPositional(name)) return null;
  if ((contactFields as readonly string[]).includes(name)) return name;
  if (propertyKeys.includes(name)) return `properties.${name}`;
  return null;
}

function parameterFormat(variables: TemplateVariable[]): SendRequirements['parameter_format'] {
  if (variables.length === 0) return null;
  return variables.every((v) => isPositional(v.placeholder)) ? 'positional' : 'named';
}

function urlSuffixes(model: TemplateModel): UrlSuffix[] {
  const suffix = (button: ButtonModel, cardIndex: number | null): UrlSuffix => ({
    key: cardIndex === null ? String(button.index) : `card.${cardIndex}.button.${button.index}`,
    button_index: button.index,
    card_index: cardIndex,
    url: button.url ?? '',
    example: button.urlExample,
  });
  const top = model.buttons.filter((b) => b.type === 'URL' && b.dynamicUrl).map((b) => suffix(b, null));
  const cards = (model.cards ?? []).flatMap((card) =>
    card.buttons.filter((b) => b.type === 'URL' && b.dynamicUrl).map((b) => suffix(b, card.index)),
  );
  return [...top, ...cards];
}

function mediaSurfaces(model: TemplateModel): MediaSurface[] {
  const surfaces: MediaSurface[] = [];
  const headerType = mediaType(model.headerFormat);
  if (headerType)
    surfaces.push({ token: 'header.media', card_index: null, type: headerType, max_bytes: mediaMaxBytes[headerType] });
  for (const card of model.cards ?? []) {
    const cardType = mediaType(card.headerFormat);
    if (cardType) {
      surfaces.push({
        token: `card.${card.index}.header.media`,
        card_index: card.index,
        type: cardType,
        max_bytes: mediaMaxBytes[cardType],
      });
    }
  }
  return surfaces;
}

export function mediaType(format: string | null): MediaSurface['type'] | null {
  if (format === 'IMAGE') return 'image';
  if (format === 'VIDEO') return 'video';
  if (format === 'DOCUMENT') return 'document';
  return null;
}

function catalogSlots(buttons: ButtonModel[]): CatalogSlot[] {
  return buttons
    .filter((button) => button.type === 'CATALOG' || button.type === 'MPM')
    .map((button) => ({
      button_index: button.index,
      kind: button.type === 'MPM' ? 'mpm' : 'catalog',
      requires_products: button.type === 'MPM',
    }));
}

function neverSendableReason(model: TemplateModel, options: AnalyzeOptions): string | null {
  if (!model.hasBody) return 'body_missing';
  // A location header needs coordinates per message, and the send API has no field that carries them.
  if (model.headerFormat === 'LOCATION') return 'location_header_not_supported';
  for (const card of model.cards ?? []) {
    if (card.headerFormat !== 'IMAGE' && card.headerFormat !== 'VIDEO') return 'carousel_card_header_not_media';
    if (card.buttons.some((button) => !fillableCardButtons.has(button.type)))
      return 'carousel_card_button_not_fillable';
  }
  const hasMpm = model.buttons.some((button) => button.type === 'MPM');
  const sections = options.catalogSendDefaults?.sections ?? [];
  if (hasMpm && sections.length === 0) return 'mpm_button_needs_catalog_send_defaults';
  const hasOtp = model.buttons.some((button) => button.type === 'OTP');
  // The one-time code fills both {{1}} of the body and the OTP button; without that placeholder there is no code.
  if (hasOtp && !model.bodyPlaceholders.some((p) => p.name === '1')) return 'otp_button_without_code_placeholder';
  return null;
}
