// A broadcast's recipient list names each recipient's contact (D242), read in the list's one statement, so that a
// page of recipients needs no request per row (decisions §17).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { phones, sender } from '../../helpers/sends.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

describe('the recipient list', () => {
  it('carries each recipient’s contact: its id, name and current phone', async () => {
    const setup = await sender(h);
    const [named, unnamed] = phones(2) as [string, string];
    const contact = await h.api('POST', '/v1/contacts', {
      key: setup.key,
      body: { first_name: 'Ana', last_name: 'Lima', phone: named },
    });
    expect(contact.status).toBe(201);
    const sent = await h.api('POST', `/v1/templates/${setup.template.id}/send`, {
      key: setup.key,
      body: {
        recipients: [
          { phone: named, variables: { 'body.1': '1' } },
          { phone: unnamed, variables: { 'body.1': '2' } },
        ],
      },
    });
    expect(sent.status).toBe(202);
    await h.fanout.drain();
    const list = await h.api('GET', `/v1/broadcasts/${sent.body.id}/recipients`, { key: setup.key });
    expect(list.status).toBe(200);
    const [first, second] = list.body.items;
    expect(first).toMatchObject({
      contact_id: contact.body.id,
      phone: named,
      contact: { id: contact.body.id, first_name: 'Ana', last_name: 'Lima', phone: named },
    });
    expect(second.contact).toEqual({ id: second.contact_id, first_name: null, last_name: null, phone: unnamed });
  });
});
