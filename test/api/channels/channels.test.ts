// GET /v1/channels/messaging/phones: the organization's live connected numbers (decisions §1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

describe('GET /v1/channels/messaging/phones', () => {
  it('lists the live numbers of every account of the organization, and nothing of others', async () => {
    const { org, key } = await h.createOrg();
    const first = await h.createAccount(org.id, {
      numbers: [{ phone: '+15550100001', display_name: 'Sales' }, { phone: '+15550100002' }],
    });
    const second = await h.createAccount(org.id, { numbers: [{ phone: '+5215512345678' }] });
    await h.admin('DELETE', `/messaging-accounts/${first.id}/numbers/${first.numbers[1].id}`);
    const other = await h.createOrg();
    await h.createAccount(other.org.id);

    const response = await h.api('GET', '/v1/channels/messaging/phones', { key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      items: [
        {
          id: first.numbers[0].id,
          phone: '+15550100001',
          display_name: 'Sales',
          business_account_id: first.business_account_id,
          status: 'live',
          created_at: expect.any(String),
        },
        {
          id: second.numbers[0].id,
          phone: '+5215512345678',
          display_name: null,
          business_account_id: second.business_account_id,
          status: 'live',
          created_at: expect.any(String),
        },
      ],
    });
  });

  it('is an empty list without a messaging account', async () => {
    const { key } = await h.createOrg();
    expect((await h.api('GET', '/v1/channels/messaging/phones', { key })).body).toEqual({ items: [] });
  });
});
