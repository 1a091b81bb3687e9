// The console's live stream (decisions §17) over a real HTTP connection: server-sent events of the organization's
// changes from the events outbox, filtered by role, ended by signing out (at once, or at the next check elsewhere), and no database connection per stream.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleClient, createUser } from '../../helpers/console.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { waitForValue, waitUntil } from '../../helpers/wait.ts';

let h: Harness;
let base: string;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const address = h.app.server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  base = `http://127.0.0.1:${address.port}`;
});
afterAll(() => h.close());

interface Received {
  event: string;
  data: Record<string, unknown>;
}

/** An open stream: the events received so far, a way to wait for one, and to close it. */
async function openStream(cookies: Map<string, string>, at = base) {
  const controller = new AbortController();
  const cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  const response = await fetch(`${at}/app/api/events`, { headers: { cookie }, signal: controller.signal });
  const received: Received[] = [];
  let ended = false;
  let buffer = '';
  const reading = (async () => {
    if (!response.body) return;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let index = buffer.indexOf('\n\n');
        while (index >= 0) {
          const block = buffer.slice(0, index);
          buffer = buffer.slice(index + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data) received.push({ event, data: JSON.parse(data) });
          index = buffer.indexOf('\n\n');
        }
      }
    } catch {
      // aborted
    }
    ended = true;
  })();
  async function waitFor(predicate: (event: Received) => boolean, what: string) {
    const found = await waitForValue(() => received.find(predicate), Boolean, {
      message: `${what} (got ${received.length} events)`,
    });
    return found as Received;
  }
  await waitFor((event) => event.event === 'ready', 'ready event');
  return {
    response,
    received,
    waitFor,
    ended: () => ended,
    close: async () => {
      controller.abort();
      await reading;
    },
  };
}

describe('GET /app/api/events', () => {
  it('needs a session', async () => {
    const response = await fetch(`${base}/app/api/events`);
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ detail: { code: 'session_required' } });
  });

  it('streams the organization’s changes as they commit, and nothing of another organization', async () => {
    const { org } = await h.createOrg();
    const other = await h.createOrg();
    const admin = await createUser(h, org.id);
    const stranger = await createUser(h, other.org.id);
    const stream = await openStream(admin.client.cookies);
    expect(stream.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const theirs = await openStream(stranger.client.cookies);

    const created = await admin.client.call('POST', '/app/api/v1/contacts', { body: { first_name: 'Live' } });
    expect(created.status).toBe(201);
    const event = await stream.waitFor(
      (received) => received.event === 'contact.created' && received.data.id === created.body.id,
      'contact.created',
    );
    expect(event.data).toEqual({ type: 'contact.created', id: created.body.id });
    await admin.client.call('PATCH', `/app/api/v1/contacts/${created.body.id}`, { body: { last_name: 'Update' } });
    await stream.waitFor((received) => received.event === 'contact.updated', 'contact.updated');

    expect(theirs.received.filter((received) => received.event.startsWith('contact.'))).toEqual([]);
    await stream.close();
    await theirs.close();
  });

  it('shows agents only what their role may read', async () => {
    const { org } = await h.createOrg();
    const admin = await createUser(h, org.id);
    const agent = await createUser(h, org.id, { role: 'agent' });
    const adminStream = await openStream(admin.client.cookies);
    const agentStream = await openStream(agent.client.cookies);
    // A broadcast event and a contact event, recorded as a feature records them (in one transaction).
    const { recordEvents } = await import('../../../src/modules/events/events.ts');
    await h.database.db.transaction().execute(async (trx) => {
      await recordEvents(trx, org.id, [
        { type: 'contact.deleted', data: { id: 'ct_gone' } },
        {
          type: 'broadcast.finished',
          data: { id: 'bc_1' } as never,
        },
      ]);
    });
    await adminStream.waitFor((received) => received.event === 'broadcast.finished', 'broadcast.finished (admin)');
    await agentStream.waitFor((received) => received.event === 'contact.deleted', 'contact.deleted (agent)');
    await adminStream.waitFor((received) => received.event === 'contact.deleted', 'contact.deleted (admin)');
    expect(agentStream.received.map((received) => received.event)).not.toContain('broadcast.finished');
    await adminStream.close();
    await agentStream.close();
  });

  it('holds no database connection per open stream', async () => {
    const { org } = await h.createOrg();
    const admin = await createUser(h, org.id);
    const first = await openStream(admin.client.cookies);
    const streams = [first];
    for (let index = 0; index < 30; index++) streams.push(await openStream(admin.client.cookies));
    const stats = h.database.poolStats();
    // Every pooled connection is idle while 31 streams are open.
    expect(stats.total - stats.idle).toBe(0);
    if (h.database.kind === 'postgres') {
      const { rows } = await sql<{ count: number }>`select count(*)::int as count from pg_stat_activity
        where datname = current_database()`.execute(h.database.db);
      expect(rows[0]?.count).toBeLessThan(15);
    }
    const created = await admin.client.call('POST', '/app/api/v1/contacts', { body: { first_name: 'Many' } });
    for (const stream of streams) {
      await stream.waitFor((received) => received.data.id === created.body.id, 'the event on every stream');
    }
    for (const stream of streams) await stream.close();
  });

  it('ends at once when its session signs out, and leaves the person’s other sessions streaming (D358)', async () => {
    const { org } = await h.createOrg();
    const admin = await createUser(h, org.id);
    const elsewhere = consoleClient(h);
    const signedIn = await elsewhere.call('POST', '/app/api/session', {
      body: { email: admin.email, password: admin.password },
    });
    expect(signedIn.status).toBe(201);
    const stream = await openStream(admin.client.cookies);
    const other = await openStream(elsewhere.cookies);
    expect((await admin.client.call('DELETE', '/app/api/session')).status).toBe(204);
    // At once, not at the 30 s check: a wait far shorter than it.
    await waitUntil(() => stream.ended(), { timeoutMs: 10_000, intervalMs: 20, message: 'the stream to end' });
    const created = await elsewhere.call('POST', '/app/api/v1/contacts', { body: { first_name: 'Still here' } });
    await other.waitFor((received) => received.data.id === created.body.id, 'the event on the other session');
    expect(other.ended()).toBe(false);
    await stream.close();
    await other.close();
  });

  it('ends at its session check when the session ended through another process (D358)', async () => {
    // Another harness on the same database stands for another API process; this one checks every 200 ms.
    const checking = await startHarness({ database: h.database, unlimited: true, consoleSessionCheckMs: 200 });
    try {
      await checking.app.listen({ port: 0, host: '127.0.0.1' });
      const address = checking.app.server.address();
      if (!address || typeof address === 'string') throw new Error('no address');
      const { org } = await h.createOrg();
      const admin = await createUser(h, org.id);
      const stream = await openStream(admin.client.cookies, `http://127.0.0.1:${address.port}`);
      // Signed out through the first harness: the second hears nothing of it but its check.
      expect((await admin.client.call('DELETE', '/app/api/session')).status).toBe(204);
      await waitUntil(() => stream.ended(), { timeoutMs: 10_000, intervalMs: 20, message: 'the stream to end' });
      await stream.close();
    } finally {
      await checking.close();
    }
  });
});

describe('PUT /app/api/presence (D289)', () => {
  it('tells the organization’s open streams who has which conversation open, and nothing to another organization', async () => {
    const { org } = await h.createOrg();
    const other = await h.createOrg();
    const admin = await createUser(h, org.id);
    const agent = await createUser(h, org.id, { role: 'agent' });
    const stranger = await createUser(h, other.org.id);
    const adminStream = await openStream(admin.client.cookies);
    const theirs = await openStream(stranger.client.cookies);

    const opened = await agent.client.call('PUT', '/app/api/presence', { body: { conversation_id: 'conv_1' } });
    expect(opened.status).toBe(204);
    const event = await adminStream.waitFor((received) => received.event === 'presence', 'presence');
    expect(event.data).toEqual({ type: 'presence', id: agent.user.id, conversation_id: 'conv_1' });
    expect((await agent.client.call('PUT', '/app/api/presence', { body: { conversation_id: null } })).status).toBe(204);
    const left = await adminStream.waitFor(
      (received) => received.event === 'presence' && received.data.conversation_id === undefined,
      'presence without a conversation',
    );
    expect(left.data).toEqual({ type: 'presence', id: agent.user.id });
    // The other organization's stream is still open and heard nothing of it.
    await stranger.client.call('PUT', '/app/api/presence', { body: { conversation_id: 'conv_2' } });
    await theirs.waitFor((received) => received.event === 'presence', 'their own presence');
    expect(theirs.received.filter((received) => received.event === 'presence')).toEqual([
      { event: 'presence', data: { type: 'presence', id: stranger.user.id, conversation_id: 'conv_2' } },
    ]);
    await adminStream.close();
    await theirs.close();
  });

  it('needs a session and a body of its shape', async () => {
    const { org } = await h.createOrg();
    const admin = await createUser(h, org.id);
    const anonymous = await fetch(`${base}/app/api/presence`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ conversation_id: null }),
    });
    expect(anonymous.status).toBe(401);
    for (const body of [{}, { conversation_id: '' }, { conversation_id: 'c', extra: 1 }, { conversation_id: 3 }]) {
      const refused = await admin.client.call('PUT', '/app/api/presence', { body });
      expect(refused.status, JSON.stringify(body)).toBe(422);
      expect(Array.isArray(refused.body.detail)).toBe(true);
    }
  });
});
