// A contact's messages and an account's balance, as the API shows them: the helpers the conversation, reply, send
// and automation tests share (decisions §15, §19, §20).
import type { Harness, Response } from './harness.ts';

/**
 * A contact's message through the sandbox's signed webhook: `{channel_id, from, text}`, or a body of its own (media,
 * a reply's context). Answers the admin API's response.
 */
export function inbound(h: Harness, channelId: string, from: string, text?: string): Promise<Response>;
export function inbound(h: Harness, body: Record<string, unknown>): Promise<Response>;
export function inbound(h: Harness, channelOrBody: string | Record<string, unknown>, from?: string, text = 'hello') {
  const body = typeof channelOrBody === 'string' ? { channel_id: channelOrBody, from, text } : channelOrBody;
  return h.admin('POST', '/sandbox/inbound', body);
}

/** A conversation's messages as `GET …/messages` lists them (newest first), or oldest first. */
export async function messagesOf(
  h: Harness,
  key: string,
  conversationId: string,
  { limit = 200, oldestFirst = false }: { limit?: number; oldestFirst?: boolean } = {},
): Promise<any[]> {
  const page = await h.api('GET', `/v1/conversations/${conversationId}/messages?limit=${limit}`, { key });
  const items = page.body.items as unknown[];
  return oldestFirst ? items.slice().reverse() : items;
}

/** A messaging account's balance, as the operator's API reads it. */
export const balanceOf = async (h: Harness, accountId: string): Promise<number> =>
  (await h.admin('GET', `/messaging-accounts/${accountId}`)).body.balance;
