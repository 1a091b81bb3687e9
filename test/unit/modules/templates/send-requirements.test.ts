import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { analyzeTemplate, SendRequirements } from '../../../../src/modules/templates/send-requirements.ts';
import * as fixtures from './template-fixtures.ts';

const noProperties = { propertyKeys: [] };

describe('analyzeTemplate', () => {
  it('reports positional header and body variables, with examples, and a dynamic URL button', () => {
    const requirements = analyzeTemplate(fixtures.orderUpdate, noProperties);
    expect(requirements).toEqual({
      parameter_format: 'positional',
      variables: [
        {
          token: 'header.1',
          component: 'header',
          card_index: null,
          placeholder: '1',
          example: '#1234',
          resolves_from: null,
        },
        {
          token: 'body.1',
          component: 'body',
          card_index: null,
          placeholder: '1',
          example: 'Pablo',
          resolves_from: null,
        },
        {
          token: 'body.2',
          component: 'body',
          card_index: null,
          placeholder: '2',
          example: '#1234',
          resolves_from: null,
        },
        {
          token: 'body.3',
          component: 'body',
          card_index: null,
          placeholder: '3',
          example: 'today',
          resolves_from: null,
        },
      ],
      contact_resolvable_tokens: [],
      url_suffixes: [
        {
          key: '0',
          button_index: 0,
          card_index: null,
          url: 'https://shop.example.com/track/{{1}}',
          example: 'https://shop.example.com/track/abc',
        },
      ],
      media: [],
      catalog_slots: [],
      coupon_code: { required: false, button_index: null },
      limited_time_offer: { present: false, expiration_required: false },
      never_sendable_reason: null,
    });
  });

  it('resolves named placeholders from contact fields first, then property keys; repeats count once', () => {
    const requirements = analyzeTemplate(fixtures.namedWelcome, { propertyKeys: ['tier', 'first_name_alt'] });
    expect(requirements.parameter_format).toBe('named');
    expect(requirements.variables.map((v) => [v.token, v.resolves_from, v.example])).toEqual([
      ['body.first_name', 'first_name', 'Pablo'],
      ['body.tier', 'properties.tier', 'gold'],
      ['body.points', null, '120'],
    ]);
    expect(requirements.contact_resolvable_tokens).toEqual(['body.first_name', 'body.tier']);
    expect(requirements.media).toEqual([
      { token: 'header.media', card_index: null, type: 'image', max_bytes: 5 * 1024 * 1024 },
    ]);
  });

  it('never resolves a positional placeholder from the contact', () => {
    const requirements = analyzeTemplate([{ type: 'BODY', text: 'Hi {{1}}' }], { propertyKeys: ['1'] });
    expect(requirements.variables[0]?.resolves_from).toBeNull();
  });

  it('reports the coupon code and offer expiration of a limited-time offer (lower-case components)', () => {
    const requirements = analyzeTemplate(fixtures.limitedTimeOffer, noProperties);
    expect(requirements.coupon_code).toEqual({ required: true, button_index: 0 });
    expect(requirements.limited_time_offer).toEqual({ present: true, expiration_required: true });
    expect(requirements.url_suffixes.map((s) => s.key)).toEqual(['1']);
    expect(requirements.media.map((m) => m.token)).toEqual(['header.media']);
    expect(requirements.variables.map((v) => v.token)).toEqual(['body.1', 'body.2']);
  });

  it('does not require an expiration when the offer has none', () => {
    const components = fixtures.limitedTimeOffer.map((c) =>
      c.type === 'limited_time_offer' ? { ...c, limited_time_offer: { text: 'Offer', has_expiration: false } } : c,
    );
    expect(analyzeTemplate(components, noProperties).limited_time_offer).toEqual({
      present: true,
      expiration_required: false,
    });
  });

  it('names carousel tokens per card, with media type per card and card URL suffix keys', () => {
    const requirements = analyzeTemplate(fixtures.carousel, noProperties);
    expect(requirements.variables.map((v) => [v.token, v.card_index])).toEqual([
      ['body.1', null],
      ['body.2', null],
      ['card.0.body.1', 0],
      ['card.0.body.2', 0],
      ['card.1.body.1', 1],
      ['card.1.body.2', 1],
    ]);
    expect(requirements.media).toEqual([
      { token: 'card.0.header.media', card_index: 0, type: 'image', max_bytes: 5242880 },
      { token: 'card.1.header.media', card_index: 1, type: 'video', max_bytes: 16777216 },
    ]);
    expect(requirements.url_suffixes.map((s) => [s.key, s.button_index, s.card_index])).toEqual([
      ['card.0.button.1', 1, 0],
      ['card.1.button.1', 1, 1],
    ]);
    expect(requirements.never_sendable_reason).toBeNull();
  });

  it('reports a document header with its 100 MB limit', () => {
    expect(analyzeTemplate(fixtures.documentHeader, noProperties).media).toEqual([
      { token: 'header.media', card_index: null, type: 'document', max_bytes: 100 * 1024 * 1024 },
    ]);
  });

  it('reports catalog slots; an MPM button needs catalog send defaults', () => {
    expect(analyzeTemplate(fixtures.catalog, noProperties)).toMatchObject({
      catalog_slots: [{ button_index: 0, kind: 'catalog', requires_products: false }],
      never_sendable_reason: null,
    });
    expect(analyzeTemplate(fixtures.multiProduct, noProperties)).toMatchObject({
      catalog_slots: [{ button_index: 0, kind: 'mpm', requires_products: true }],
      never_sendable_reason: 'mpm_button_needs_catalog_send_defaults',
    });
    const withDefaults = analyzeTemplate(fixtures.multiProduct, {
      propertyKeys: [],
      catalogSendDefaults: { sections: [{ title: 'Your cart', product_retailer_ids: ['sku-1'] }] },
    });
    expect(withDefaults.never_sendable_reason).toBeNull();
  });

  it.each([
    [
      'a carousel card button that cannot be filled',
      fixtures.carouselWithCopyCode,
      'carousel_card_button_not_fillable',
    ],
    ['a location header', fixtures.locationHeader, 'location_header_not_supported'],
    ['no body', [{ type: 'HEADER', format: 'TEXT', text: 'Hi' }], 'body_missing'],
    [
      'a carousel card with a text header',
      [
        { type: 'BODY', text: 'x' },
        { type: 'CAROUSEL', cards: [{ components: [{ type: 'HEADER', format: 'TEXT', text: 'a' }] }] },
      ],
      'carousel_card_header_not_media',
    ],
    [
      'an OTP button without a code placeholder',
      [
        { type: 'BODY', text: 'Your code' },
        { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE' }] },
      ],
      'otp_button_without_code_placeholder',
    ],
  ])('is never sendable with %s', (_name, components, reason) => {
    expect(analyzeTemplate(components, noProperties).never_sendable_reason).toBe(reason);
  });

  it('has nothing to fill for a static template', () => {
    const requirements = analyzeTemplate([{ type: 'BODY', text: 'Hello!' }], noProperties);
    expect(requirements.parameter_format).toBeNull();
    expect(requirements.variables).toEqual([]);
    expect(requirements.never_sendable_reason).toBeNull();
  });

  it('treats a static URL button as needing no suffix', () => {
    const components = [
      { type: 'BODY', text: 'x' },
      { type: 'BUTTONS', buttons: [{ type: 'URL', text: 'Site', url: 'https://example.com' }] },
    ];
    expect(analyzeTemplate(components, noProperties).url_suffixes).toEqual([]);
  });

  it('answers a JSON-serialisable object that matches its published schema', () => {
    for (const components of Object.values(fixtures)) {
      const requirements = analyzeTemplate(components, { propertyKeys: ['tier'] });
      expect(Value.Check(SendRequirements, requirements)).toBe(true);
      expect(JSON.parse(JSON.stringify(requirements))).toEqual(requirements);
    }
  });

  it('the schema refuses a shape with a missing key (the check can fail)', () => {
    const { never_sendable_reason: _dropped, ...partial } = analyzeTemplate(fixtures.orderUpdate, noProperties);
    expect(Value.Check(SendRequirements, partial)).toBe(false);
  });
});
