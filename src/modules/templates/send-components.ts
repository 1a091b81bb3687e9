// A recipient's resolved values into the port's SendComponents, in the template's own order (header, offer,
// body, buttons, carousel). Components that take no parameter are left out, as the platform expects.

import type { SendComponent, SendParameter, TemplateComponent } from '../../messaging/platform.ts';
import type { ResolvedParameters } from './recipient-input.ts';
import type { CatalogSendDefaults } from './send-requirements.schemas.ts';
import { type ButtonModel, type CardModel, isPositional, type Placeholder, readTemplate } from './template-model.ts';

export interface BuildOptions {
  catalogSendDefaults?: CatalogSendDefaults | null;
}

/**
 * Expects `parameters` from a successful validateRecipientInput over the same components; a value it lacks is a
 * programming error, so this throws rather than send a message the platform would refuse.
 */
export function buildSendComponents(
  components: readonly TemplateComponent[],
  parameters: ResolvedParameters,
  options: BuildOptions = {},
): SendComponent[] {
  const model = readTemplate(components);
  const result: SendComponent[] = [];
  if (model.headerPlaceholders.length > 0) {
    result.push({ type: 'header', parameters: textParameters(model.headerPlaceholders, parameters) });
  }
  const headerMedia = mediaParameter(model.headerFormat, 'header.media', parameters);
  if (headerMedia) result.push({ type: 'header', parameters: [headerMedia] });
  if (model.limitedTimeOffer?.hasExpiration) {
    const expirationTimeMs = required(parameters.lto_expiration_ms, 'lto_expiration');
    result.push({ type: 'limited_time_offer', parameters: [{ type: 'limited_time_offer', expirationTimeMs }] });
  }
  if (model.bodyPlaceholders.length > 0) {
    result.push({ type: 'body', parameters: textParameters(model.bodyPlaceholders, parameters) });
  }
  const code = parameters.variables['body.1'];
  for (const button of model.buttons) {
    const component = buttonComponent(button, null, parameters, options, code);
    if (component) result.push(component);
  }
  if (model.cards) {
    result.push({
      type: 'carousel',
      cards: model.cards.map((card) => ({ cardIndex: card.index, components: cardComponents(card, parameters) })),
    });
  }
  return result;
}

function cardComponents(card: CardModel, parameters: ResolvedParameters): SendComponent[] {
  const components: SendComponent[] = [];
  const media = mediaParameter(card.headerFormat, `card.${card.index}.header.media`, parameters);
  if (media) components.push({ type: 'header', parameters: [media] });
  if (card.bodyPlaceholders.length > 0) {
    components.push({ type: 'body', parameters: textParameters(card.bodyPlaceholders, parameters) });
  }
  for (const button of card.buttons) {
    const component = buttonComponent(button, card.index, parameters, {}, undefined);
    if (component) components.push(component);
  }
  return components;
}

function buttonComponent(
  button: ButtonModel,
  cardIndex: number | null,
  parameters: ResolvedParameters,
  options: BuildOptions,
  oneTimeCode: string | undefined,
): SendComponent | undefined {
  const index = button.index;
  switch (button.type) {
    case 'URL': {
      if (!button.dynamicUrl) return undefined;
      const key = cardIndex === null ? String(index) : `card.${cardIndex}.button.${index}`;
      const text = required(parameters.url_suffixes[key], key);
      return { type: 'button', subType: 'url', index, parameters: [{ type: 'text', text }] };
    }
    case 'COPY_CODE': {
      const couponCode = required(parameters.coupon_code, 'coupon_code');
      return { type: 'button', subType: 'copy_code', index, parameters: [{ type: 'coupon_code', couponCode }] };
    }
    case 'OTP':
      // Authentication templates repeat the one-time code (body {{1}}) as the button's URL parameter.
      return {
        type: 'button',
        subType: 'url',
        index,
        parameters: [{ type: 'text', text: required(oneTimeCode, 'body.1') }],
      };
    case 'QUICK_REPLY':
      // Carousel cards must carry a payload per quick reply; the label is what the inbound reply will echo.
      if (cardIndex === null) return undefined;
      return {
        type: 'button',
        subType: 'quick_reply',
        index,
        parameters: [{ type: 'payload', payload: button.text ?? `card.${cardIndex}.button.${index}` }],
      };
    case 'CATALOG':
    case 'MPM':
      return catalogButton(button.type, index, options.catalogSendDefaults ?? null);
    default:
      return undefined; // phone number, static URL, flow, …: nothing to fill
  }
}

function catalogButton(type: 'CATALOG' | 'MPM', index: number, defaults: CatalogSendDefaults | null): SendComponent {
  const action: Extract<SendParameter, { type: 'action' }>['action'] = {};
  if (defaults?.thumbnail_product_retailer_id !== undefined) {
    action.thumbnailProductRetailerId = defaults.thumbnail_product_retailer_id;
  }
  if (type === 'MPM') {
    const sections = defaults?.sections ?? [];
    if (sections.length === 0) throw new Error('an MPM button needs catalog_send_defaults.sections');
    action.sections = sections.map((s) => ({ title: s.title, productRetailerIds: [...s.product_retailer_ids] }));
  }
  return {
    type: 'button',
    subType: type === 'MPM' ? 'mpm' : 'catalog',
    index,
    parameters: [{ type: 'action', action }],
  };
}

// Positional parameters go in placeholder number order; named ones carry their name and may go in any order.
function textParameters(placeholders: Placeholder[], parameters: ResolvedParameters): SendParameter[] {
  const ordered = [...placeholders].sort((a, b) =>
    isPositional(a.name) && isPositional(b.name) ? Number(a.name) - Number(b.name) : 0,
  );
  return ordered.map((placeholder) => {
    const text = required(parameters.variables[placeholder.token], placeholder.token);
    return isPositional(placeholder.name)
      ? { type: 'text', text }
      : { type: 'text', text, parameterName: placeholder.name };
  });
}

function mediaParameter(format: string | null, token: string, parameters: ResolvedParameters): SendParameter | null {
  const type = format === 'IMAGE' ? 'image' : format === 'VIDEO' ? 'video' : format === 'DOCUMENT' ? 'document' : null;
  if (type === null) return null;
  return { type, link: required(parameters.media[token], token) };
}

function required<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) throw new Error(`send parameter ${what} was not resolved`);
  return value;
}
