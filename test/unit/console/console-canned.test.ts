// A canned response filled for a contact (decisions §19, D277): the names and custom properties the placeholders
// name, by the property's kind, and nothing of a placeholder left for the contact to read.
import type { Contact, Property } from '@crm-messaging/sdk';
import { describe, expect, it } from 'vitest';
import { fillCannedResponse, unfilledPlaceholders } from '../../../console/src/pages/inbox/canned.ts';

type Stored = NonNullable<Contact['properties']>[string];
const value = (kind: string, fields: Partial<Stored>): Stored => ({
  property_id: null,
  kind,
  value_text: null,
  value_number: null,
  value_bool: null,
  value_date: null,
  value_json: null,
  ...fields,
});

const contact = {
  first_name: 'Ana',
  last_name: 'García',
  properties: {
    plan: value('DROPDOWN', { value_text: 'gold' }),
    city: value('TEXT', { value_text: 'Puebla' }),
    orders: value('NUMBER', { value_number: 3 }),
    vip: value('BOOLEAN', { value_bool: false }),
    renewal: value('DATE', { value_date: '2027-01-31' }),
    sizes: value('MULTI_SELECT', { value_json: ['s', 'm'] }),
    'shoe-size': value('TEXT', { value_text: '38' }),
  },
};

const plan = {
  key: 'plan',
  kind: 'DROPDOWN',
  options: [{ key: 'gold', label: 'Gold' }],
} as unknown as Property;

describe('fillCannedResponse', () => {
  it('fills the names and properties, each time they appear', () => {
    expect(
      fillCannedResponse(
        'Hi {{contact.first_name}} {{contact.last_name}}! {{contact.first_name}}, your city: {{contact.properties.city}}.',
        contact,
      ),
    ).toBe('Hi Ana García! Ana, your city: Puebla.');
  });

  it('reads each kind of property as a person does, option keys as labels when the definitions are given', () => {
    const text =
      '{{contact.properties.plan}}|{{contact.properties.orders}}|{{contact.properties.vip}}|' +
      '{{contact.properties.renewal}}|{{contact.properties.sizes}}|{{contact.properties.shoe-size}}';
    expect(fillCannedResponse(text, contact)).toBe('gold|3|No|2027-01-31|s, m|38');
    expect(fillCannedResponse(text, contact, [plan])).toBe('Gold|3|No|2027-01-31|s, m|38');
  });

  it('leaves no placeholder for a value the contact lacks, and other braces as written', () => {
    expect(
      fillCannedResponse('Hi {{contact.first_name}}, {{contact.properties.missing}}.', {
        first_name: null,
        last_name: null,
      }),
    ).toBe('Hi , .');
    expect(fillCannedResponse('{{ contact.first_name }} {{order.id}} {contact.first_name}', contact)).toBe(
      'Ana {{order.id}} {contact.first_name}',
    );
  });

  it('is literal: a value holding $& or a placeholder is not expanded again', () => {
    expect(
      fillCannedResponse('{{contact.first_name}}', { first_name: '$& {{contact.last_name}}', last_name: 'X' }),
    ).toBe('$& {{contact.last_name}}');
  });
});

describe('unfilledPlaceholders', () => {
  it('names each placeholder the contact has no value for, once', () => {
    expect(
      unfilledPlaceholders(
        '{{contact.first_name}} {{contact.last_name}} {{ contact.last_name }} {{contact.properties.city}} {{contact.properties.tier}}',
        { ...contact, last_name: null },
      ),
    ).toEqual(['{{contact.last_name}}', '{{contact.properties.tier}}']);
  });
});
