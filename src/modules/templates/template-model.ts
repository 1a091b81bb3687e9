// Reads a template's platform components (as stored and as the platform returns them: HEADER, BODY, BUTTONS,
// CAROUSEL, LIMITED_TIME_OFFER, in either letter case) into one typed model. Requirements analysis and send
// building both walk this model, so they can never disagree about what a template contains.

import type { TemplateComponent } from '../../messaging/platform.ts';

export interface Placeholder {
  /** `1` or `first_name`: what sits between the braces. */
  name: string;
  /** `body.1`, `header.first_name`, `card.0.body.1` (decisions §7). */
  token: string;
  example: string | null;
}

export interface ButtonModel {
  index: number;
  /** Upper case: URL, QUICK_REPLY, PHONE_NUMBER, COPY_CODE, CATALOG, MPM, OTP, FLOW, … */
  type: string;
  text: string | null;
  url: string | null;
  /** A URL button whose url ends in {{1}} takes a per-recipient suffix. */
  dynamicUrl: boolean;
  urlExample: string | null;
}

export interface CardModel {
  index: number;
  headerFormat: string | null;
  bodyPlaceholders: Placeholder[];
  buttons: ButtonModel[];
}

export interface TemplateModel {
  hasBody: boolean;
  headerFormat: string | null;
  headerPlaceholders: Placeholder[];
  bodyPlaceholders: Placeholder[];
  buttons: ButtonModel[];
  cards: CardModel[] | null;
  limitedTimeOffer: { hasExpiration: boolean } | null;
}

type Fields = Record<string, unknown>;

const placeholderPattern = /\{\{([^{}]*)\}\}/g;

/** The placeholders of a text in order of first appearance, without repeats. */
export function placeholderNames(text: string): string[] {
  const names: string[] = [];
  for (const match of text.matchAll(placeholderPattern)) {
    const name = (match[1] ?? '').trim();
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

export function isPositional(name: string): boolean {
  return /^\d+$/.test(name);
}

export function readTemplate(components: readonly TemplateComponent[]): TemplateModel {
  const model: TemplateModel = {
    hasBody: false,
    headerFormat: null,
    headerPlaceholders: [],
    bodyPlaceholders: [],
    buttons: [],
    cards: null,
    limitedTimeOffer: null,
  };
  for (const component of components) {
    const type = upper(component.type);
    if (type === 'HEADER') {
      model.headerFormat = upper(component.format) || 'TEXT';
      if (model.headerFormat === 'TEXT') model.headerPlaceholders = readPlaceholders(component, 'header', 'header');
    } else if (type === 'BODY') {
      model.hasBody = true;
      model.bodyPlaceholders = readPlaceholders(component, 'body', 'body');
    } else if (type === 'BUTTONS') {
      model.buttons = readButtons(component.buttons);
    } else if (type === 'CAROUSEL') {
      model.cards = readCards(component.cards);
    } else if (type === 'LIMITED_TIME_OFFER') {
      const offer = isRecord(component.limited_time_offer) ? component.limited_time_offer : {};
      model.limitedTimeOffer = { hasExpiration: offer.has_expiration === true };
    }
  }
  return model;
}

function readCards(value: unknown): CardModel[] {
  const cards = Array.isArray(value) ? value : [];
  return cards.map((card, index) => {
    const model: CardModel = { index, headerFormat: null, bodyPlaceholders: [], buttons: [] };
    const components = isRecord(card) && Array.isArray(card.components) ? card.components.filter(isRecord) : [];
    for (const component of components) {
      const type = upper(component.type);
      if (type === 'HEADER') model.headerFormat = upper(component.format) || 'TEXT';
      else if (type === 'BODY') model.bodyPlaceholders = readPlaceholders(component, 'body', `card.${index}.body`);
      else if (type === 'BUTTONS') model.buttons = readButtons(component.buttons);
    }
    return model;
  });
}

function readButtons(value: unknown): ButtonModel[] {
  const buttons = Array.isArray(value) ? value : [];
  return buttons.map((button, index) => {
    const fields: Fields = isRecord(button) ? button : {};
    const url = typeof fields.url === 'string' ? fields.url : null;
    const example = Array.isArray(fields.example) ? fields.example[0] : fields.example;
    return {
      index,
      type: upper(fields.type),
      text: typeof fields.text === 'string' ? fields.text : null,
      url,
      dynamicUrl: url !== null && placeholderNames(url).length > 0,
      urlExample: typeof example === 'string' ? example : null,
    };
  });
}

// Examples live in `example.{header,body}_text` (positional; the body's is nested one array deeper) or
// `example.{header,body}_text_named_params` ([{param_name, example}]).
function readPlaceholders(component: Fields, kind: 'header' | 'body', tokenPrefix: string): Placeholder[] {
  const text = typeof component.text === 'string' ? component.text : '';
  const example = isRecord(component.example) ? component.example : {};
  const positional = flatStrings(example[`${kind}_text`]);
  const named = Array.isArray(example[`${kind}_text_named_params`]) ? example[`${kind}_text_named_params`] : [];
  return placeholderNames(text).map((name) => {
    let sample: string | null = null;
    if (isPositional(name)) sample = positional[Number(name) - 1] ?? null;
    else {
      const entry = (named as unknown[]).find((item) => isRecord(item) && item.param_name === name);
      if (isRecord(entry) && typeof entry.example === 'string') sample = entry.example;
    }
    return { name, token: `${tokenPrefix}.${name}`, example: sample };
  });
}

function flatStrings(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const first: unknown = value[0];
  const list: unknown[] = Array.isArray(first) ? first : value;
  return list.map((item) => (typeof item === 'string' ? item : ''));
}

function upper(value: unknown): string {
  return typeof value === 'string' ? value.toUpperCase() : '';
}

export function isRecord(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
