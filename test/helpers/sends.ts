// Fixtures for sends: an organization with a messaging account and an APPROVED template, made through the API.
import type { Harness } from './harness.ts';

export const NAMED_BODY = [
  {
    type: 'BODY',
    text: 'Hi {{first_name}}, your order {{order_id}} ships today',
    example: {
      body_text_named_params: [
        { param_name: 'first_name', example: 'Ana' },
        { param_name: 'order_id', example: 'A-1' },
      ],
    },
  },
];

export const POSITIONAL_BODY = [{ type: 'BODY', text: 'Your code is {{1}}', example: { body_text: [['123']] } }];

export const IMAGE_HEADER_WITH_BUTTON = [
  { type: 'HEADER', format: 'IMAGE', example: { header_handle: ['https://example.com/a.png'] } },
  { type: 'BODY', text: 'Order {{1}} is ready', example: { body_text: [['A-1']] } },
  { type: 'BUTTONS', buttons: [{ type: 'URL', text: 'Track', url: 'https://example.com/t/{{1}}', example: ['x'] }] },
];

let templateCounter = 0;

export async function approvedTemplate(
  h: Harness,
  key: string,
  components: unknown[] = POSITIONAL_BODY,
  overrides: Record<string, unknown> = {},
) {
  templateCounter += 1;
  const created = await h.api('POST', '/v1/templates', {
    key,
    body: {
      name: `tpl_${Date.now()}_${templateCounter}`,
      language: 'en_US',
      category: 'UTILITY',
      components,
      ...overrides,
    },
  });
  if (created.status !== 201) throw new Error(`template create failed: ${created.status} ${created.text}`);
  const review = await h.admin('POST', `/sandbox/templates/${created.body.id}/review`, { event: 'APPROVED' });
  if (review.status !== 200) throw new Error(`review failed: ${review.status} ${review.text}`);
  return (await h.api('GET', `/v1/templates/${created.body.id}`, { key })).body;
}

export interface SenderOptions {
  balance?: number;
  limit?: number;
  prices?: Record<string, number>;
  numbers?: { phone: string }[];
  components?: unknown[];
  org?: Record<string, unknown>;
}

/** An organization ready to send: key, messaging account and an approved template. */
export async function sender(h: Harness, options: SenderOptions = {}) {
  const { org, key } = await h.createOrg(options.org);
  const account = await h.createAccount(org.id, {
    numbers: options.numbers ?? [{ phone: '+15550100001' }],
    ...(options.balance !== undefined ? { balance: options.balance } : {}),
    ...(options.limit !== undefined ? { messaging_limit_24h: options.limit } : {}),
    ...(options.prices ? { prices: options.prices } : {}),
  });
  const template = await approvedTemplate(h, key, options.components ?? POSITIONAL_BODY);
  return { org, key, account, template };
}

/** Distinct test phones: +1 555 7xx xxxx. */
let phoneCounter = 0;

/** Distinct test phones (+1 555 …), never ending in the sandbox's magic suffixes 0404 and 0500. */
export function phones(count: number): string[] {
  const list: string[] = [];
  while (list.length < count) {
    phoneCounter += 1;
    const number = 5_550_000_000 + ((process.pid * 7919 + Date.now()) % 1_000_000) * 1000 + phoneCounter;
    const text = String(number);
    if (text.endsWith('0404') || text.endsWith('0500')) continue;
    list.push(`+1${text}`);
  }
  return list;
}

export function recipientsFor(list: string[], variables: Record<string, string> = { 'body.1': '42' }) {
  return list.map((phone) => ({ phone, variables }));
}
