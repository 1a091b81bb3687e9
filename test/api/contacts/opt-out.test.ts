// Opt-out (decisions §14): keywords on inbound messages (sandbox and cloud shapes, one path), PATCH, the list filter,
// and MARKETING sends that fail opted-out recipients at once: never handed off, never charged, outside the limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { inbound } from '../../helpers/messages.ts';
import { approvedTemplate, POSITIONAL_BODY, phones, sender } from '../../helpers/sends.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

async function contactByPhone(key: string, phone: string) {
  const page = await h.api('GET', `/v1/contacts?q=${encodeURIComponent(phone)}`, { key });
  return page.body.items[0];
}

async function subscribe(key: string) {
  const created = await h.api('POST', '/v1/webhook-endpoints', {
    key,
    body: { url: 'http://127.0.0.1:9/hooks', events: ['*'] },
  });
  expect(created.status).toBe(201);
}

const eventsOf = async (orgId: string, type: string) =>
  (
    await h.database.db
      .selectFrom('webhook_events')
      .select(['payload'])
      .where('org_id', '=', orgId)
      .where('type', '=', type)
      .orderBy('created_at')
      .execute()
  ).map((row) => JSON.parse(row.payload).data);

describe('opt-out keywords on inbound messages', () => {
  it('STOP (trimmed, any case) opts out, START opts back in, each a contact.updated; other texts change nothing', async () => {
    const { org, key } = await h.createOrg();
    const account = await h.createAccount(org.id);
    await subscribe(key);
    const channel = account.numbers[0].id;
    const [phone] = phones(1) as [string];
    expect((await inbound(h, channel, phone, 'hello')).status).toBe(200);
    expect(await contactByPhone(key, phone)).toMatchObject({ opted_out: false, opted_out_at: null });

    await inbound(h, channel, phone, 'please stop');
    expect((await contactByPhone(key, phone)).opted_out).toBe(false);

    await inbound(h, channel, phone, '  sToP \n');
    const out = await contactByPhone(key, phone);
    expect(out.opted_out).toBe(true);
    expect(Date.parse(out.opted_out_at)).not.toBeNaN();
    // Already opted out: a second keyword moves nothing and records no event.
    await inbound(h, channel, phone, 'UNSUBSCRIBE');
    expect((await contactByPhone(key, phone)).opted_out_at).toBe(out.opted_out_at);

    await inbound(h, channel, phone, 'Start');
    expect(await contactByPhone(key, phone)).toMatchObject({ opted_out: false, opted_out_at: null });

    const updates = await eventsOf(org.id, 'contact.updated');
    expect(updates.map((contact) => contact.opted_out)).toEqual([true, false]);
    expect(updates[0]).toMatchObject({ id: out.id, phone });
  });

  it.each(['STOPALL', 'CANCEL', 'END', 'QUIT', 'unsubscribe'])('%s opts out; UNSTOP opts back in', async (word) => {
    const { org, key } = await h.createOrg();
    const account = await h.createAccount(org.id);
    const [phone] = phones(1) as [string];
    await inbound(h, account.numbers[0].id, phone, word);
    expect((await contactByPhone(key, phone)).opted_out).toBe(true);
    await inbound(h, account.numbers[0].id, phone, 'unstop');
    expect((await contactByPhone(key, phone)).opted_out).toBe(false);
  });

  it('the cloud platform’s webhook shape takes the same path', async () => {
    const { org, key } = await h.createOrg();
    const account = await h.createAccount(org.id, { numbers: [{ phone: '+15550100001' }] });
    const payload = {
      object: 'whatsapp_business_account',
      entry: [
        {
          id: account.business_account_id,
          changes: [
            {
              value: {
                messaging_product: 'whatsapp',
                metadata: { display_phone_number: '15550100001', phone_number_id: account.numbers[0].phone_number_id },
                contacts: [{ profile: { name: 'Kerry' }, wa_id: '16315551182' }],
                messages: [
                  {
                    from: '16315551182',
                    id: `wamid.optout${Date.now()}`,
                    timestamp: String(Math.floor(Date.now() / 1000)),
                    text: { body: 'Quit' },
                    type: 'text',
                  },
                ],
              },
              field: 'messages',
            },
          ],
        },
      ],
    };
    expect((await h.webhook(payload)).status).toBe(200);
    expect(await contactByPhone(key, '+16315551182')).toMatchObject({ first_name: 'Kerry', opted_out: true });
  });
});

describe('opted_out through the API', () => {
  it('PATCH writes it, every contact answer carries it, and the list filters on it', async () => {
    const { key } = await h.createOrg();
    const created = await h.api('POST', '/v1/contacts', { key, body: { first_name: 'Ana' } });
    expect(created.body).toMatchObject({ opted_out: false, opted_out_at: null });
    const other = await h.api('POST', '/v1/contacts', { key, body: { first_name: 'Bea' } });

    const bad = await h.api('PATCH', `/v1/contacts/${created.body.id}`, { key, body: { opted_out: 'yes' } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['body', 'opted_out']);
    expect((await h.api('GET', `/v1/contacts/${created.body.id}`, { key })).body.opted_out).toBe(false);

    const out = await h.api('PATCH', `/v1/contacts/${created.body.id}`, { key, body: { opted_out: true } });
    expect(out.status).toBe(200);
    expect(out.body.opted_out).toBe(true);
    expect(Date.parse(out.body.opted_out_at)).not.toBeNaN();
    // The same value again keeps the first opt-out time.
    const again = await h.api('PATCH', `/v1/contacts/${created.body.id}`, { key, body: { opted_out: true } });
    expect(again.body.opted_out_at).toBe(out.body.opted_out_at);

    const optedOut = await h.api('GET', '/v1/contacts?opted_out=true', { key });
    expect(optedOut.body.items.map((contact: { id: string }) => contact.id)).toEqual([created.body.id]);
    expect(optedOut.body.total_count).toBe(1);
    const optedIn = await h.api('GET', '/v1/contacts?opted_out=false', { key });
    expect(optedIn.body.items.map((contact: { id: string }) => contact.id)).toEqual([other.body.id]);
    expect((await h.api('GET', '/v1/contacts?opted_out=maybe', { key })).status).toBe(422);

    const back = await h.api('PATCH', `/v1/contacts/${created.body.id}`, { key, body: { opted_out: false } });
    expect(back.body).toMatchObject({ opted_out: false, opted_out_at: null });
  });
});

describe('sends to opted-out contacts', () => {
  async function optedOutContact(key: string) {
    const [phone] = phones(1) as [string];
    const created = await h.api('POST', '/v1/contacts', { key, body: { phone } });
    await h.api('PATCH', `/v1/contacts/${created.body.id}`, { key, body: { opted_out: true } });
    return created.body as { id: string; phone: string };
  }

  it('MARKETING: failed at once with opted_out, never handed off, never charged, outside the 24-hour limit', async () => {
    const { org, key, account } = await sender(h, { limit: 1, prices: { MARKETING: 2 } });
    await subscribe(key);
    const marketing = await approvedTemplate(h, key, POSITIONAL_BODY, { category: 'MARKETING' });
    const stopped = await optedOutContact(key);
    const [reachable] = phones(1) as [string];
    const send = await h.api('POST', `/v1/templates/${marketing.id}/send`, {
      key,
      body: {
        recipients: [
          { contact_id: stopped.id, variables: { 'body.1': '1' } },
          { phone: reachable, variables: { 'body.1': '2' } },
        ],
      },
    });
    expect(send.status).toBe(202);
    expect(send.body).toMatchObject({ requested: 2, failed: 1, pending: 1 });
    expect(await h.fanout.drain()).toBe(1);

    const after = await h.api('GET', `/v1/broadcasts/${send.body.id}`, { key });
    expect(after.body).toMatchObject({ status: 'completed', sent: 1, failed: 1, pending: 0 });
    const recipients = (await h.api('GET', `/v1/broadcasts/${send.body.id}/recipients`, { key })).body.items;
    expect(recipients).toEqual([
      expect.objectContaining({
        contact_id: stopped.id,
        status: 'failed',
        error: 'opted_out',
        platform_message_id: null,
      }),
      expect.objectContaining({ phone: reachable, status: 'sent' }),
    ]);
    expect((await h.admin('GET', `/messaging-accounts/${account.id}`)).body.balance).toBeCloseTo(100 - 2, 6);
    const handedOff = await h.database.db
      .selectFrom('messages')
      .select('id')
      .where('org_id', '=', org.id)
      .where('contact_id', '=', stopped.id)
      .execute();
    expect(handedOff).toEqual([]);
    const events = await eventsOf(org.id, 'broadcast.recipient.updated');
    expect(events.filter((event) => event.error === 'opted_out')).toEqual([
      expect.objectContaining({ broadcast_id: send.body.id, contact_id: stopped.id, status: 'failed' }),
    ]);

    // Only-opted-out sends need neither limit nor balance: the one message of the limit is used already.
    const second = await h.api('POST', `/v1/templates/${marketing.id}/send`, {
      key,
      body: { recipients: [{ contact_id: stopped.id, variables: { 'body.1': '3' } }] },
    });
    expect(second.status).toBe(202);
    expect(second.body).toMatchObject({ status: 'completed', failed: 1, pending: 0 });
  });

  it('UTILITY still reaches an opted-out contact', async () => {
    const { key, template } = await sender(h);
    const stopped = await optedOutContact(key);
    const send = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: [{ contact_id: stopped.id, variables: { 'body.1': '1' } }] },
    });
    expect(send.status).toBe(202);
    expect(await h.fanout.drain()).toBe(1);
    const recipients = (await h.api('GET', `/v1/broadcasts/${send.body.id}/recipients`, { key })).body.items;
    expect(recipients).toEqual([expect.objectContaining({ contact_id: stopped.id, status: 'sent', error: null })]);
  });
});
