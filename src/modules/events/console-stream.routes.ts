// GET /app/api/events (decisions §17): the organization's changes as server-sent events, so that the inbox, a
// broadcast's progress and template reviews update without reloading. Each event is named by its type and carries
// the ids it concerns; the page fetches what it shows. No replay: on (re)connecting, and on a `resync` event, the
// page fetches again what it shows.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { ApiError } from '../../http/api-error.ts';
import { authOf } from '../../http/auth.ts';
import { consoleErrors, NoContent } from '../../http/schemas.ts';
import type { ConsoleEventHub, StreamEvent } from './console-stream.ts';

const KEEP_ALIVE_MS = 15_000;
/**
 * How often an open stream checks that its session is still live: a sign-out through another process, a removed
 * person, an expired session end the stream within this (a sign-out through this process ends it at once, D358).
 */
const SESSION_CHECK_MS = 30_000;

/** What the stream asks of the console's sessions (the sessions feature answers it; events/ imports no feature). */
export interface StreamSessions {
  /** The live session a token names, its idle clock left alone; undefined when it has ended. */
  resolve(token: string, options: { touch: false }): Promise<{ user: { role: 'admin' | 'agent' } } | undefined>;
  /** D358: hears this process's sign-outs, by token; answers the function that stops listening. */
  onSignOut(listener: (token: string) => void): () => void;
}

export interface ConsoleStreamDeps {
  hub: ConsoleEventHub;
  sessions: StreamSessions;
  /** Whether a person of this role may see events of this type (their role's read scopes). */
  visible: (role: 'admin' | 'agent', type: string) => boolean;
  /** How often an open stream checks its session (default SESSION_CHECK_MS). */
  sessionCheckMs?: number | undefined;
}

const PresenceBody = Type.Object(
  {
    conversation_id: Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()], {
      description: 'The conversation the person has open, or null when none.',
    }),
    seq: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description:
          'The page’s own increasing number for its announcements (passed on as is): two announcements of one page ' +
          'may arrive in either order (a leave sent as the page unloads overtaking the last heartbeat), and a ' +
          'receiver keeps the newest.',
      }),
    ),
  },
  {
    additionalProperties: false,
    title: 'PresenceUpdate',
    description: 'D289: the conversation the signed-in person has open in the console, or null.',
    examples: [{ conversation_id: 'conv_01j9z3k4m5n6p7q8r9s0t1v2w3' }],
  },
);

const frame = (event: StreamEvent) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

export function consoleStreamRoutes(parent: FastifyInstance, deps: ConsoleStreamDeps): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const open = new Set<() => void>();
  // D358: the open streams of each session, by its token, so that a sign-out through this process ends them at once.
  const bySession = new Map<string, Set<() => void>>();
  const stopHearing = deps.sessions.onSignOut((token) => {
    for (const end of [...(bySession.get(token) ?? [])]) end();
  });
  app.addHook('onClose', async () => {
    stopHearing();
    for (const end of [...open]) end();
  });

  app.get(
    '/events',
    {
      schema: {
        tags: ['Console'],
        security: [{ consoleSession: [] }],
        summary: 'The organization’s changes, live (server-sent events)',
        description:
          '`text/event-stream`. Each event is named by its type (`message.received`, `contact.updated`, ' +
          '`broadcast.recipient.updated`, `broadcast.finished`, `template.status_updated`, …, as the webhook events) ' +
          'and its data is `{type, id?, broadcast_id?, conversation_id?, contact_id?}` (a note also names `author_id` and ' +
          '`mention_ids`, D293). A person sees the types their ' +
          'role may read. `resync` means some changes may have been missed: fetch again what is shown. Comments ' +
          'keep the connection alive every 15 seconds; the stream ends when the session does.',
        operationId: 'consoleEvents',
        response: {
          200: {
            description: 'The stream.',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          ...consoleErrors(),
        },
      },
    },
    async (request, reply) => {
      const { orgId, user } = authOf(request);
      const token = request.consoleSession?.token;
      let role = user?.role ?? 'agent';
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        ...(reply.getHeaders() as Record<string, string>),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-accel-buffering': 'no',
      });
      raw.write(': connected\nretry: 2000\n\n');
      let ended = false;
      let unsubscribe = () => {};
      const timers: NodeJS.Timeout[] = [];
      const end = () => {
        if (ended) return;
        ended = true;
        open.delete(end);
        if (token) {
          const ofSession = bySession.get(token);
          ofSession?.delete(end);
          if (ofSession?.size === 0) bySession.delete(token);
        }
        for (const timer of timers) clearInterval(timer);
        unsubscribe();
        raw.end();
      };
      open.add(end);
      if (token) bySession.set(token, (bySession.get(token) ?? new Set()).add(end));
      request.raw.on('close', end);
      try {
        unsubscribe = await deps.hub.subscribe(
          orgId,
          (events) => {
            for (const event of events) if (deps.visible(role, event.type)) raw.write(frame(event));
          },
          () => raw.write(frame({ type: 'resync' })),
        );
      } catch (error) {
        request.log.warn({ err: error }, 'console stream not started');
        return end();
      }
      if (ended) return unsubscribe();
      timers.push(setInterval(() => raw.write(': keep-alive\n\n'), KEEP_ALIVE_MS));
      timers.push(
        setInterval(async () => {
          const session = token ? await deps.sessions.resolve(token, { touch: false }).catch(() => null) : undefined;
          // Ended (signed out, removed, expired), or a database that did not answer: the page reconnects.
          if (!session) return end();
          role = session.user.role;
        }, deps.sessionCheckMs ?? SESSION_CHECK_MS),
      );
      raw.write(frame({ type: 'ready' }));
    },
  );

  app.put(
    '/presence',
    {
      schema: {
        tags: ['Console'],
        security: [{ consoleSession: [] }],
        summary: 'Say which conversation you have open',
        description:
          'decisions §19 (D289): any signed-in person tells the organization’s open streams which conversation they ' +
          'have open (or none): each stream receives a `presence` event `{type: "presence", id: <user id>, ' +
          'conversation_id?, seq?}`. Nothing is stored; the console says it again every 20 seconds while the ' +
          'conversation stays open, and forgets a person it has not heard from for 50.',
        operationId: 'consoleSetPresence',
        body: PresenceBody,
        response: { 204: NoContent('Announced.'), ...consoleErrors({ 422: [] }) },
      },
    },
    async (request, reply) => {
      const { orgId, user } = authOf(request);
      if (!user) throw new ApiError(401, { code: 'session_required' });
      const { conversation_id: conversationId, seq } = request.body;
      await deps.hub.publish(orgId, [
        {
          type: 'presence',
          id: user.id,
          ...(conversationId === null ? {} : { conversation_id: conversationId }),
          ...(seq === undefined ? {} : { seq }),
        },
      ]);
      return reply.code(204).send(null);
    },
  );
}
