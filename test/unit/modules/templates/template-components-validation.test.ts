import { describe, expect, it } from 'vitest';
import { validateTemplateComponents } from '../../../../src/modules/templates/send-requirements.ts';
import * as fixtures from './template-fixtures.ts';

const types = (components: unknown) => validateTemplateComponents(components).map((problem) => problem.type);

describe('validateTemplateComponents', () => {
  it.each(Object.entries(fixtures).filter(([name]) => name !== 'carouselWithCopyCode'))(
    'accepts the realistic %s template',
    (_name, components) => {
      expect(validateTemplateComponents(components)).toEqual([]);
    },
  );

  it('accepts an authentication body without text', () => {
    const components = [
      { type: 'BODY', add_security_recommendation: true },
      { type: 'FOOTER', code_expiration_minutes: 10, text: 'Expires soon' },
      { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE', text: 'Copy code' }] },
    ];
    expect(validateTemplateComponents(components)).toEqual([]);
  });

  it('refuses something that is not a list', () => {
    expect(validateTemplateComponents({ type: 'BODY' })).toEqual([
      { loc: ['body', 'components'], msg: 'Input should be a valid list', type: 'list_type' },
    ]);
  });

  it('refuses an unknown component type and reports the missing body', () => {
    expect(validateTemplateComponents([{ type: 'SIDEBAR', text: 'x' }])).toEqual([
      expect.objectContaining({ loc: ['body', 'components', 0, 'type'], type: 'unknown_component_type' }),
      { loc: ['body', 'components'], msg: 'A BODY component is required', type: 'missing_body' },
    ]);
  });

  it('refuses components without a type, and duplicates', () => {
    expect(types([{ text: 'x' }, { type: 'BODY', text: 'a' }, { type: 'body', text: 'b' }])).toEqual([
      'missing',
      'duplicate_component',
    ]);
  });

  it.each([
    ['body', [{ type: 'BODY', text: 'x'.repeat(1025) }], ['body', 'components', 0, 'text'], 1024],
    [
      'header',
      [
        { type: 'HEADER', format: 'TEXT', text: 'x'.repeat(61) },
        { type: 'BODY', text: 'b' },
      ],
      ['body', 'components', 0, 'text'],
      60,
    ],
    [
      'footer',
      [
        { type: 'BODY', text: 'b' },
        { type: 'FOOTER', text: 'x'.repeat(61) },
      ],
      ['body', 'components', 1, 'text'],
      60,
    ],
    [
      'button',
      [
        { type: 'BODY', text: 'b' },
        { type: 'BUTTONS', buttons: [{ type: 'QUICK_REPLY', text: 'x'.repeat(26) }] },
      ],
      ['body', 'components', 1, 'buttons', 0, 'text'],
      25,
    ],
  ])('refuses a too-long %s text', (_name, components, loc, max) => {
    expect(validateTemplateComponents(components)).toEqual([
      expect.objectContaining({ loc, type: 'string_too_long', ctx: { max_length: max } }),
    ]);
  });

  it('accepts texts exactly at the limits', () => {
    const components = [
      { type: 'HEADER', format: 'TEXT', text: 'h'.repeat(60) },
      { type: 'BODY', text: 'b'.repeat(1024) },
      { type: 'FOOTER', text: 'f'.repeat(60) },
      { type: 'BUTTONS', buttons: [{ type: 'QUICK_REPLY', text: 'q'.repeat(25) }] },
    ];
    expect(validateTemplateComponents(components)).toEqual([]);
  });

  it('allows at most 10 buttons', () => {
    const buttons = (count: number) =>
      Array.from({ length: count }, (_, i) => ({ type: 'QUICK_REPLY', text: `Reply ${i}` }));
    expect(
      types([
        { type: 'BODY', text: 'b' },
        { type: 'BUTTONS', buttons: buttons(10) },
      ]),
    ).toEqual([]);
    expect(
      types([
        { type: 'BODY', text: 'b' },
        { type: 'BUTTONS', buttons: buttons(11) },
      ]),
    ).toEqual(['too_many_buttons']);
  });

  it('refuses unknown button types and badly placed URL placeholders', () => {
    const components = [
      { type: 'BODY', text: 'b' },
      {
        type: 'BUTTONS',
        buttons: [
          { type: 'TELEPORT', text: 'x' },
          { type: 'URL', text: 'a', url: 'https://x.com/{{1}}/page' },
          { type: 'URL', text: 'b', url: 'https://x.com/{{2}}' },
          { type: 'URL', text: 'c' },
          { type: 'URL', text: 'd', url: 'https://x.com/{{1}}' },
        ],
      },
    ];
    expect(validateTemplateComponents(components).map((p) => [p.loc.slice(3).join('.'), p.type])).toEqual([
      ['buttons.0.type', 'unknown_button_type'],
      ['buttons.1.url', 'invalid_url_placeholder'],
      ['buttons.2.url', 'invalid_url_placeholder'],
      ['buttons.3.url', 'missing'],
    ]);
  });

  it('requires placeholders to be sequential from 1 in each text', () => {
    expect(types([{ type: 'BODY', text: 'Hi {{1}} and {{3}}' }])).toEqual(['placeholders_not_sequential']);
    expect(types([{ type: 'BODY', text: 'Hi {{2}}' }])).toEqual(['placeholders_not_sequential']);
    expect(types([{ type: 'BODY', text: 'Hi {{2}}, {{1}} and {{1}} again' }])).toEqual([]);
  });

  it('refuses mixing positional and named placeholders across the template', () => {
    const components = [
      { type: 'HEADER', format: 'TEXT', text: 'Hello {{1}}' },
      { type: 'BODY', text: 'Your code is {{code}}' },
    ];
    expect(validateTemplateComponents(components)).toEqual([
      {
        loc: ['body', 'components'],
        msg: 'Placeholders must be all positional or all named',
        type: 'mixed_placeholders',
      },
    ]);
  });

  it('requires named placeholders in lower case', () => {
    expect(validateTemplateComponents([{ type: 'BODY', text: 'Hi {{First_Name}} {{ }}' }])).toEqual([
      expect.objectContaining({ type: 'invalid_placeholder', ctx: { placeholder: 'First_Name' } }),
      expect.objectContaining({ type: 'invalid_placeholder', ctx: { placeholder: '' } }),
    ]);
  });

  it('refuses placeholders in a footer and more than one in a header', () => {
    expect(
      types([
        { type: 'HEADER', format: 'TEXT', text: '{{1}} {{2}}' },
        { type: 'BODY', text: 'b' },
        { type: 'FOOTER', text: 'Bye {{1}}' },
      ]),
    ).toEqual(['too_many_placeholders', 'placeholders_not_allowed']);
  });

  it('checks header formats and required texts', () => {
    expect(
      types([
        { type: 'HEADER', format: 'GIF' },
        { type: 'BODY', text: 'b' },
      ]),
    ).toEqual(['enum']);
    expect(
      types([
        { type: 'HEADER', format: 'TEXT' },
        { type: 'BODY', text: '' },
      ]),
    ).toEqual(['missing', 'missing']);
  });

  it('checks carousel cards: count, media headers, card body length, two buttons at most', () => {
    const card = (header: string, body: string, buttons: number) => ({
      components: [
        { type: 'HEADER', format: header },
        { type: 'BODY', text: body },
        { type: 'BUTTONS', buttons: Array.from({ length: buttons }, () => ({ type: 'QUICK_REPLY', text: 'More' })) },
      ],
    });
    expect(
      types([
        { type: 'BODY', text: 'b' },
        { type: 'CAROUSEL', cards: [card('IMAGE', 'x', 1)] },
      ]),
    ).toEqual(['card_count']);
    const problems = validateTemplateComponents([
      { type: 'BODY', text: 'b' },
      {
        type: 'CAROUSEL',
        cards: [card('TEXT', 'x', 1), card('VIDEO', 'y'.repeat(161), 3), { components: [{ type: 'BODY', text: 'z' }] }],
      },
    ]);
    expect(problems.map((p) => [p.loc.slice(3).join('.'), p.type])).toEqual([
      ['cards.0.components.0.format', 'enum'],
      ['cards.1.components.1.text', 'string_too_long'],
      ['cards.1.components.2.buttons', 'too_many_buttons'],
      ['cards.2.components', 'missing_card_header'],
    ]);
  });

  it('checks the limited-time offer text (16 characters)', () => {
    const components = [
      { type: 'LIMITED_TIME_OFFER', limited_time_offer: { text: 'x'.repeat(17), has_expiration: false } },
      { type: 'BODY', text: 'b' },
    ];
    expect(types(components)).toEqual(['string_too_long']);
  });

  it('takes a custom loc prefix', () => {
    expect(validateTemplateComponents([], ['body', 'template', 'components'])).toEqual([
      { loc: ['body', 'template', 'components'], msg: 'A BODY component is required', type: 'missing_body' },
    ]);
  });
});

describe('limited-time offer buttons', () => {
  const offer = (hasExpiration: boolean, buttons: unknown[]) => [
    { type: 'LIMITED_TIME_OFFER', limited_time_offer: { text: 'Expiring offer!', has_expiration: hasExpiration } },
    { type: 'BODY', text: 'Good news, {{1}}!' },
    { type: 'BUTTONS', buttons },
  ];
  const url = { type: 'URL', text: 'Book now!', url: 'https://x.com/offers?code={{1}}' };

  it('requires a leading COPY_CODE button when the offer expires', () => {
    expect(types(offer(true, [url]))).toEqual(['copy_code_required']);
    expect(types(offer(true, [url, { type: 'COPY_CODE', example: 'X' }]))).toEqual(['copy_code_required']);
    expect(types(offer(true, [{ type: 'COPY_CODE', example: 'X' }, url]))).toEqual([]);
  });

  it('does not when the offer has no expiration', () => {
    expect(types(offer(false, [url]))).toEqual([]);
  });
});
