import { describe, expect, it } from 'vitest';
import type { TemplateComponent } from '../../../../src/messaging/platform.ts';
import {
  analyzeTemplate,
  buildSendComponents,
  type RecipientContact,
  type RecipientInput,
  validateRecipientInput,
} from '../../../../src/modules/templates/send-requirements.ts';
import * as fixtures from './template-fixtures.ts';

function build(
  components: TemplateComponent[],
  recipient: RecipientInput,
  contact: RecipientContact | null = null,
  catalogSendDefaults: Parameters<typeof analyzeTemplate>[1]['catalogSendDefaults'] = null,
) {
  const requirements = analyzeTemplate(components, { propertyKeys: ['tier'], catalogSendDefaults });
  const check = validateRecipientInput(requirements, recipient, contact);
  if (!check.ok) throw new Error(JSON.stringify(check.error));
  return buildSendComponents(components, check.parameters, { catalogSendDefaults });
}

describe('buildSendComponents', () => {
  it('builds header, body and dynamic URL button; static buttons are left out', () => {
    expect(
      build(fixtures.orderUpdate, {
        variables: { 'header.1': '#99', 'body.1': 'Ana', 'body.2': '#99', 'body.3': 'tomorrow' },
        url_suffixes: { '0': 'abc' },
      }),
    ).toEqual([
      { type: 'header', parameters: [{ type: 'text', text: '#99' }] },
      {
        type: 'body',
        parameters: [
          { type: 'text', text: 'Ana' },
          { type: 'text', text: '#99' },
          { type: 'text', text: 'tomorrow' },
        ],
      },
      { type: 'button', subType: 'url', index: 0, parameters: [{ type: 'text', text: 'abc' }] },
    ]);
  });

  it('orders positional parameters by number, not by appearance', () => {
    const components = [{ type: 'BODY', text: 'From {{2}} to {{1}}' }];
    expect(build(components, { variables: { 'body.1': 'one', 'body.2': 'two' } })).toEqual([
      {
        type: 'body',
        parameters: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
        ],
      },
    ]);
  });

  it('names named parameters and fills them from the contact', () => {
    expect(
      build(
        fixtures.namedWelcome,
        { variables: { 'body.points': '120' }, header_media_url: 'https://cdn.example.com/w.jpg' },
        { first_name: 'Ana', properties: { tier: { kind: 'TEXT', value_text: 'gold' } } },
      ),
    ).toEqual([
      { type: 'header', parameters: [{ type: 'image', link: 'https://cdn.example.com/w.jpg' }] },
      {
        type: 'body',
        parameters: [
          { type: 'text', text: 'Ana', parameterName: 'first_name' },
          { type: 'text', text: 'gold', parameterName: 'tier' },
          { type: 'text', text: '120', parameterName: 'points' },
        ],
      },
    ]);
  });

  it('builds a limited-time offer with its expiration, coupon code and URL suffix', () => {
    expect(
      build(fixtures.limitedTimeOffer, {
        variables: { 'body.1': 'Pablo', 'body.2': 'CARIBE25' },
        url_suffixes: { '1': 'n3mtql' },
        header_media_url: 'https://cdn.example.com/beach.jpg',
        coupon_code: 'CARIBE25',
        lto_expiration: 1708804800000,
      }),
    ).toEqual([
      { type: 'header', parameters: [{ type: 'image', link: 'https://cdn.example.com/beach.jpg' }] },
      { type: 'limited_time_offer', parameters: [{ type: 'limited_time_offer', expirationTimeMs: 1708804800000 }] },
      {
        type: 'body',
        parameters: [
          { type: 'text', text: 'Pablo' },
          { type: 'text', text: 'CARIBE25' },
        ],
      },
      { type: 'button', subType: 'copy_code', index: 0, parameters: [{ type: 'coupon_code', couponCode: 'CARIBE25' }] },
      { type: 'button', subType: 'url', index: 1, parameters: [{ type: 'text', text: 'n3mtql' }] },
    ]);
  });

  it('builds a carousel card by card', () => {
    const components = build(fixtures.carousel, {
      variables: {
        'body.1': '15OFF',
        'body.2': '15%',
        'card.0.body.1': 'LEMON',
        'card.0.body.2': '10%',
        'card.1.body.1': 'FRUIT',
        'card.1.body.2': '20%',
      },
      url_suffixes: { 'card.0.button.1': 'lemons', 'card.1.button.1': 'fruit' },
      card_media_urls: ['https://cdn.example.com/lemons.jpg', 'https://cdn.example.com/fruit.mp4'],
    });
    expect(components).toEqual([
      {
        type: 'body',
        parameters: [
          { type: 'text', text: '15OFF' },
          { type: 'text', text: '15%' },
        ],
      },
      {
        type: 'carousel',
        cards: [
          {
            cardIndex: 0,
            components: [
              { type: 'header', parameters: [{ type: 'image', link: 'https://cdn.example.com/lemons.jpg' }] },
              {
                type: 'body',
                parameters: [
                  { type: 'text', text: 'LEMON' },
                  { type: 'text', text: '10%' },
                ],
              },
              {
                type: 'button',
                subType: 'quick_reply',
                index: 0,
                parameters: [{ type: 'payload', payload: 'Send more like this' }],
              },
              { type: 'button', subType: 'url', index: 1, parameters: [{ type: 'text', text: 'lemons' }] },
            ],
          },
          {
            cardIndex: 1,
            components: [
              { type: 'header', parameters: [{ type: 'video', link: 'https://cdn.example.com/fruit.mp4' }] },
              {
                type: 'body',
                parameters: [
                  { type: 'text', text: 'FRUIT' },
                  { type: 'text', text: '20%' },
                ],
              },
              {
                type: 'button',
                subType: 'quick_reply',
                index: 0,
                parameters: [{ type: 'payload', payload: 'Send more like this' }],
              },
              { type: 'button', subType: 'url', index: 1, parameters: [{ type: 'text', text: 'fruit' }] },
            ],
          },
        ],
      },
    ]);
  });

  it('repeats the one-time code on the OTP button', () => {
    expect(build(fixtures.authentication, { variables: { 'body.1': '123456' } })).toEqual([
      { type: 'body', parameters: [{ type: 'text', text: '123456' }] },
      { type: 'button', subType: 'url', index: 0, parameters: [{ type: 'text', text: '123456' }] },
    ]);
  });

  it('fills catalog and multi-product buttons from the catalog send defaults', () => {
    expect(build(fixtures.catalog, {}, null, { thumbnail_product_retailer_id: 'sku-9' })).toEqual([
      {
        type: 'button',
        subType: 'catalog',
        index: 0,
        parameters: [{ type: 'action', action: { thumbnailProductRetailerId: 'sku-9' } }],
      },
    ]);
    expect(build(fixtures.catalog, {})).toEqual([
      { type: 'button', subType: 'catalog', index: 0, parameters: [{ type: 'action', action: {} }] },
    ]);
    const defaults = {
      thumbnail_product_retailer_id: 'sku-1',
      sections: [{ title: 'Your cart', product_retailer_ids: ['sku-1', 'sku-2'] }],
    };
    expect(build(fixtures.multiProduct, { variables: { 'header.1': 'Ana' } }, null, defaults)).toEqual([
      { type: 'header', parameters: [{ type: 'text', text: 'Ana' }] },
      {
        type: 'button',
        subType: 'mpm',
        index: 0,
        parameters: [
          {
            type: 'action',
            action: {
              thumbnailProductRetailerId: 'sku-1',
              sections: [{ title: 'Your cart', productRetailerIds: ['sku-1', 'sku-2'] }],
            },
          },
        ],
      },
    ]);
  });

  it('builds nothing for a static template', () => {
    expect(
      build(
        [
          { type: 'BODY', text: 'Hello!' },
          { type: 'FOOTER', text: 'Bye' },
        ],
        {},
      ),
    ).toEqual([]);
  });

  it('throws when given parameters that were not validated', () => {
    const empty = { variables: {}, url_suffixes: {}, media: {}, coupon_code: null, lto_expiration_ms: null };
    expect(() => buildSendComponents(fixtures.orderUpdate, empty)).toThrow(/header\.1/);
    expect(() => buildSendComponents(fixtures.multiProduct, { ...empty, variables: { 'header.1': 'A' } })).toThrow(
      /MPM/,
    );
  });
});
