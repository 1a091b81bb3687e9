import { describe, expect, it } from 'vitest';
import { propertyText } from '../../../../src/modules/templates/recipient-input.ts';
import {
  analyzeTemplate,
  type RecipientContact,
  validateRecipientInput,
} from '../../../../src/modules/templates/send-requirements.ts';
import * as fixtures from './template-fixtures.ts';

const order = analyzeTemplate(fixtures.orderUpdate, { propertyKeys: [] });
const welcome = analyzeTemplate(fixtures.namedWelcome, { propertyKeys: ['tier'] });
const offer = analyzeTemplate(fixtures.limitedTimeOffer, { propertyKeys: [] });
const carousel = analyzeTemplate(fixtures.carousel, { propertyKeys: [] });

const ana: RecipientContact = {
  first_name: 'Ana',
  last_name: null,
  properties: { tier: { kind: 'DROPDOWN', value_text: 'gold' } },
};

const fullOrder = {
  variables: { 'header.1': '#99', 'body.1': 'Ana', 'body.2': '#99', 'body.3': 'tomorrow' },
  url_suffixes: { '0': 'abc' },
};

describe('validateRecipientInput', () => {
  it('resolves every value when all are given', () => {
    expect(validateRecipientInput(order, fullOrder, null)).toEqual({
      ok: true,
      parameters: {
        variables: fullOrder.variables,
        url_suffixes: { '0': 'abc' },
        media: {},
        coupon_code: null,
        lto_expiration_ms: null,
      },
    });
  });

  it('refuses keys the template does not use', () => {
    const result = validateRecipientInput(
      order,
      { ...fullOrder, variables: { ...fullOrder.variables, 'body.4': 'x', name: 'y' } },
      null,
    );
    expect(result).toEqual({ ok: false, error: { code: 'unknown_variables', keys: ['body.4', 'name'] } });
  });

  it('refuses unknown URL suffixes', () => {
    const result = validateRecipientInput(order, { ...fullOrder, url_suffixes: { '0': 'a', '1': 'b' } }, null);
    expect(result).toEqual({ ok: false, error: { code: 'unknown_url_suffixes', keys: ['1'] } });
  });

  it('checks unknown keys before missing values (decisions §7 order)', () => {
    const result = validateRecipientInput(order, { variables: { nope: 'x' }, url_suffixes: { '7': 'x' } }, null);
    expect(result).toMatchObject({ ok: false, error: { code: 'unknown_variables' } });
    const second = validateRecipientInput(order, { url_suffixes: { '7': 'x' } }, null);
    expect(second).toMatchObject({ ok: false, error: { code: 'unknown_url_suffixes' } });
  });

  it('lists every missing token, URL suffixes as button.N', () => {
    const result = validateRecipientInput(order, { variables: { 'body.1': 'Ana' } }, null);
    expect(result).toEqual({
      ok: false,
      error: { code: 'missing_variables', tokens: ['header.1', 'body.2', 'body.3', 'button.0'] },
    });
  });

  it('counts blank values as missing', () => {
    const result = validateRecipientInput(
      order,
      { ...fullOrder, variables: { ...fullOrder.variables, 'body.2': '  ' } },
      null,
    );
    expect(result).toEqual({ ok: false, error: { code: 'missing_variables', tokens: ['body.2'] } });
  });

  it('fills named placeholders from the contact and its properties', () => {
    const result = validateRecipientInput(
      welcome,
      { variables: { 'body.points': '120' }, header_media_url: 'https://cdn.example.com/w.jpg' },
      ana,
    );
    expect(result).toEqual({
      ok: true,
      parameters: expect.objectContaining({
        variables: { 'body.first_name': 'Ana', 'body.tier': 'gold', 'body.points': '120' },
        media: { 'header.media': 'https://cdn.example.com/w.jpg' },
      }),
    });
  });

  it('lets an explicit value win over the contact', () => {
    const result = validateRecipientInput(
      welcome,
      { variables: { 'body.points': '1', 'body.first_name': 'Annie' }, header_media_url: 'https://x/a.jpg' },
      ana,
    );
    expect(result.ok && result.parameters.variables['body.first_name']).toBe('Annie');
  });

  it('asks for contact-resolvable tokens when the contact lacks the value, and for header.media', () => {
    const result = validateRecipientInput(welcome, { variables: { 'body.points': '1' } }, { first_name: null });
    expect(result).toEqual({
      ok: false,
      error: { code: 'missing_variables', tokens: ['body.first_name', 'body.tier', 'header.media'] },
    });
  });

  it('accepts a media token inside variables', () => {
    const result = validateRecipientInput(
      welcome,
      { variables: { 'body.points': '1', 'header.media': 'https://x/a.jpg' } },
      ana,
    );
    expect(result.ok && result.parameters.media).toEqual({ 'header.media': 'https://x/a.jpg' });
  });

  it('refuses a header media URL for a template without a media header', () => {
    const result = validateRecipientInput(order, { ...fullOrder, header_media_url: 'https://x/a.jpg' }, null);
    expect(result).toEqual({ ok: false, error: { code: 'unknown_variables', keys: ['header.media'] } });
  });

  it('needs the coupon code and a parseable offer expiration', () => {
    const base = {
      variables: { 'body.1': 'Ana', 'body.2': 'CARIBE25' },
      url_suffixes: { '1': 'n3mtql' },
      header_media_url: 'https://x/a.jpg',
    };
    expect(validateRecipientInput(offer, { ...base, lto_expiration: 'soon' }, null)).toEqual({
      ok: false,
      error: { code: 'missing_variables', tokens: ['coupon_code', 'lto_expiration'] },
    });
    const iso = validateRecipientInput(
      offer,
      { ...base, coupon_code: 'CARIBE25', lto_expiration: '2026-12-01T00:00:00Z' },
      null,
    );
    expect(iso.ok && [iso.parameters.coupon_code, iso.parameters.lto_expiration_ms]).toEqual([
      'CARIBE25',
      Date.UTC(2026, 11, 1),
    ]);
    const ms = validateRecipientInput(offer, { ...base, coupon_code: 'C', lto_expiration: 1708804800000 }, null);
    expect(ms.ok && ms.parameters.lto_expiration_ms).toBe(1708804800000);
  });

  it('takes card media as an array or an object keyed by card index', () => {
    const base = {
      variables: {
        'body.1': 'A',
        'body.2': 'B',
        'card.0.body.1': 'C',
        'card.0.body.2': 'D',
        'card.1.body.1': 'E',
        'card.1.body.2': 'F',
      },
      url_suffixes: { 'card.0.button.1': 'x', 'card.1.button.1': 'y' },
    };
    const asArray = validateRecipientInput(
      carousel,
      { ...base, card_media_urls: ['https://x/0.jpg', 'https://x/1.mp4'] },
      null,
    );
    const asObject = validateRecipientInput(
      carousel,
      { ...base, card_media_urls: { '1': 'https://x/1.mp4', '0': 'https://x/0.jpg' } },
      null,
    );
    expect(asArray.ok && asArray.parameters.media).toEqual({
      'card.0.header.media': 'https://x/0.jpg',
      'card.1.header.media': 'https://x/1.mp4',
    });
    expect(asObject).toEqual(asArray);
    expect(validateRecipientInput(carousel, { ...base, card_media_urls: ['https://x/0.jpg', null] }, null)).toEqual({
      ok: false,
      error: { code: 'missing_variables', tokens: ['card.1.header.media'] },
    });
    expect(
      validateRecipientInput(
        carousel,
        { ...base, card_media_urls: ['https://x/0.jpg', 'https://x/1.mp4', 'https://x/2.jpg'] },
        null,
      ),
    ).toEqual({ ok: false, error: { code: 'unknown_variables', keys: ['card.2.header.media'] } });
  });

  it('names missing card URL suffixes by their key', () => {
    const result = validateRecipientInput(carousel, { card_media_urls: ['https://x/0.jpg', 'https://x/1.mp4'] }, null);
    expect(result.ok === false && result.error.code === 'missing_variables' && result.error.tokens).toEqual([
      'body.1',
      'body.2',
      'card.0.body.1',
      'card.0.body.2',
      'card.1.body.1',
      'card.1.body.2',
      'card.0.button.1',
      'card.1.button.1',
    ]);
  });
});

describe('propertyText', () => {
  it.each([
    [{ kind: 'TEXT', value_text: 'hello' }, 'hello'],
    [{ kind: 'NUMBER', value_number: 12.5 }, '12.5'],
    [{ kind: 'MONEY', value_number: 100 }, '100'],
    [{ kind: 'BOOLEAN', value_bool: false }, 'false'],
    [{ kind: 'DATE', value_date: '2026-01-31' }, '2026-01-31'],
    [{ kind: 'MULTI_SELECT', value_json: ['red', 'blue'] }, 'red, blue'],
    [{ kind: 'FILE', value_json: [{ url: 'https://x' }] }, undefined],
    [{ kind: 'NUMBER', value_number: null }, undefined],
    [{ value_number: 3 }, '3'],
  ])('%j shows as %j', (value, expected) => {
    expect(propertyText(value)).toBe(expected);
  });
});
