// Component shapes modelled on the platform's documented examples (order updates, limited-time offers, media
// card carousels, authentication, catalog), in the letter case the platform returns them.

import type { TemplateComponent } from '../../../../src/messaging/platform.ts';

export const orderUpdate: TemplateComponent[] = [
  { type: 'HEADER', format: 'TEXT', text: 'Order {{1}}', example: { header_text: ['#1234'] } },
  {
    type: 'BODY',
    text: 'Hi {{1}}, your order {{2}} ships {{3}}. Reply STOP to opt out.',
    example: { body_text: [['Pablo', '#1234', 'today']] },
  },
  { type: 'FOOTER', text: 'Lucky Shrub' },
  {
    type: 'BUTTONS',
    buttons: [
      {
        type: 'URL',
        text: 'Track order',
        url: 'https://shop.example.com/track/{{1}}',
        example: ['https://shop.example.com/track/abc'],
      },
      { type: 'QUICK_REPLY', text: 'Stop updates' },
      { type: 'PHONE_NUMBER', text: 'Call us', phone_number: '+15550783881' },
    ],
  },
];

export const namedWelcome: TemplateComponent[] = [
  { type: 'HEADER', format: 'IMAGE', example: { header_handle: ['4::aW1hZ2UvanBlZw==:ARb...'] } },
  {
    type: 'BODY',
    text: 'Welcome {{first_name}}! As a {{tier}} member you have {{points}} points. {{first_name}}, enjoy.',
    example: {
      body_text_named_params: [
        { param_name: 'first_name', example: 'Pablo' },
        { param_name: 'tier', example: 'gold' },
        { param_name: 'points', example: '120' },
      ],
    },
  },
];

export const limitedTimeOffer: TemplateComponent[] = [
  { type: 'header', format: 'image', example: { header_handle: ['4::aW...'] } },
  { type: 'limited_time_offer', limited_time_offer: { text: 'Expiring offer!', has_expiration: true } },
  {
    type: 'body',
    text: 'Good news, {{1}}! Use code {{2}} to get 25% off all Caribbean Destination packages!',
    example: { body_text: [['Pablo', 'CARIBE25']] },
  },
  {
    type: 'buttons',
    buttons: [
      { type: 'copy_code', example: 'CARIBE25' },
      {
        type: 'url',
        text: 'Book now!',
        url: 'https://awesomedestinations.com/offers?code={{1}}',
        example: ['https://awesomedestinations.com/offers?ref=n3mtql'],
      },
    ],
  },
];

function card(bodyText: string, headerFormat = 'IMAGE', buttons?: unknown[]): Record<string, unknown> {
  return {
    components: [
      { type: 'HEADER', format: headerFormat, example: { header_handle: ['4::aW1hZ2UvanBlZw==:ARb...'] } },
      { type: 'BODY', text: bodyText, example: { body_text: [['15OFF', '15%']] } },
      {
        type: 'BUTTONS',
        buttons: buttons ?? [
          { type: 'QUICK_REPLY', text: 'Send more like this' },
          {
            type: 'URL',
            text: 'Buy now',
            url: 'https://www.luckyshrub.com/shop?code={{1}}',
            example: ['https://x/shop?code=A'],
          },
        ],
      },
    ],
  };
}

export const carousel: TemplateComponent[] = [
  {
    type: 'BODY',
    text: 'Summer is here, and we have the freshest produce around! Use code {{1}} to get {{2}} off your next order.',
    example: { body_text: [['15OFF', '15%']] },
  },
  {
    type: 'CAROUSEL',
    cards: [
      card('Rare lemons for unique lemon tea. Use code {{1}} to get {{2}} off all produce.'),
      card('Exotic fruit for unique fruit salad. Use code {{1}} to get {{2}} off all exotic produce.', 'VIDEO'),
    ],
  },
];

export const carouselWithCopyCode: TemplateComponent[] = [
  { type: 'BODY', text: 'Our picks' },
  {
    type: 'CAROUSEL',
    cards: [card('One {{1}} {{2}}', 'IMAGE', [{ type: 'COPY_CODE', example: 'X' }]), card('Two {{1}} {{2}}')],
  },
];

export const authentication: TemplateComponent[] = [
  { type: 'BODY', text: '*{{1}}* is your verification code. For your security, do not share this code.' },
  { type: 'FOOTER', text: 'This code expires in 10 minutes.' },
  { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE', text: 'Copy code' }] },
];

export const catalog: TemplateComponent[] = [
  { type: 'BODY', text: 'Now shop for your favourite products right here on WhatsApp!' },
  { type: 'FOOTER', text: 'Best grocery deals on WhatsApp!' },
  { type: 'BUTTONS', buttons: [{ type: 'CATALOG', text: 'View catalog' }] },
];

export const multiProduct: TemplateComponent[] = [
  { type: 'HEADER', format: 'TEXT', text: 'Forget something, {{1}}?', example: { header_text: ['Pablo'] } },
  { type: 'BODY', text: 'Looks like you left these items in your cart.' },
  { type: 'BUTTONS', buttons: [{ type: 'MPM', text: 'View items' }] },
];

export const locationHeader: TemplateComponent[] = [
  { type: 'HEADER', format: 'LOCATION' },
  { type: 'BODY', text: 'Your order is ready for pickup at the store above.' },
];

export const documentHeader: TemplateComponent[] = [
  { type: 'HEADER', format: 'DOCUMENT', example: { header_handle: ['4::YX...'] } },
  { type: 'BODY', text: 'Your invoice is attached.' },
];
