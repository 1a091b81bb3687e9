// Webhook endpoints (decisions §11): CRUD, secret rotation, the test ping, the deliveries log and manual retry.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { ApiError, notFound, validationError } from '../../http/errors.ts';
import { decodeCursor, encodeCursor } from '../../http/pagination.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import type { Keyring } from '../../lib/secrets-box.ts';
import { recordPing } from '../events/events.ts';
import * as deliveriesRepo from './deliveries.repo.ts';
import { openSecrets, sealSecrets } from './endpoint-secrets.ts';
import { checkEndpointUrl } from './endpoint-url.ts';
import * as repo from './webhook-endpoints.repo.ts';
import {
  type DeliveryListQuery,
  MAX_ENDPOINTS_PER_ORG,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEndpointInput,
  type WebhookEndpointPatch,
  type WebhookEndpointWithSecret,
} from './webhook-endpoints.schemas.ts';

/** decisions §11: during a rotation, deliveries are signed with the previous secret too for 24 hours. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

export function toEndpoint(row: repo.EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason as WebhookEndpoint['disabled_reason'],
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function toDelivery(row: deliveriesRepo.DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status as WebhookDelivery['status'],
    attempts: row.attempts,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    next_attempt_at: row.status === 'pending' ? row.next_attempt_at.toISOString() : null,
    attempt_history: row.attempt_log,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The endpoint with its secret in clear: shown only when created or rotated (decisions §11). */
const withSecret = (row: repo.EndpointRow, secret: string): WebhookEndpointWithSecret => ({
  ...toEndpoint(row),
  secret,
});

const endpointDisabled = () =>
  new ApiError(409, { code: 'webhook_endpoint_disabled', message: 'Enable the endpoint first.' });

export function createWebhookEndpointsService(deps: {
  db: Kysely<DB>;
  clock: Clock;
  allowHosts: readonly string[];
  /** Seals the signing secrets at rest (SECRETS_KEY). */
  keyring: Keyring;
  /** The event types an endpoint may subscribe to: the wiring's catalog (D332). */
  eventTypes: readonly string[];
}) {
  const { db, clock, allowHosts, keyring } = deps;

  async function existing(orgId: string, id: string) {
    const row = await repo.findEndpoint(db, orgId, id);
    if (!row) throw notFound();
    return row;
  }

  return {
    eventTypes: deps.eventTypes,

    async list(orgId: string) {
      return { items: (await repo.listEndpoints(db, orgId)).map(toEndpoint) };
    },

    async get(orgId: string, id: string) {
      return toEndpoint(await existing(orgId, id));
    },

    async create(orgId: string, input: WebhookEndpointInput) {
      const url = await checkEndpointUrl(input.url, allowHosts);
      return db.transaction().execute(async (trx) => {
        await repo.lockOrganization(trx, orgId);
        if ((await repo.countEndpoints(trx, orgId)) >= MAX_ENDPOINTS_PER_ORG) {
          throw new ApiError(422, {
            code: 'webhook_endpoint_limit',
            limit: MAX_ENDPOINTS_PER_ORG,
            message: `An organization can have at most ${MAX_ENDPOINTS_PER_ORG} webhook endpoints.`,
          });
        }
        const now = clock.now();
        const id = newId('we');
        const secret = newSecret();
        const row = await repo.insertEndpoint(trx, {
          org_id: orgId,
          id,
          url,
          events: input.events,
          description: input.description ?? null,
          disabled_reason: null,
          ...sealSecrets(keyring, orgId, id, { secret, previous: null }),
          previous_secret_expires_at: null,
          failing_since: null,
          created_at: now,
          updated_at: now,
        });
        return withSecret(row, secret);
      });
    },

    async update(orgId: string, id: string, patch: WebhookEndpointPatch) {
      const url = patch.url === undefined ? undefined : await checkEndpointUrl(patch.url, allowHosts);
      return db.transaction().execute(async (trx) => {
        const current = await repo.findEndpoint(trx, orgId, id, { lock: true });
        if (!current) throw notFound();
        const changes: repo.EndpointChanges = {};
        if (url !== undefined) changes.url = url;
        if (patch.events !== undefined) changes.events = patch.events;
        if (patch.description !== undefined) changes.description = patch.description;
        if (patch.enabled === true && !current.enabled) {
          Object.assign(changes, { enabled: true, disabled_reason: null, failing_since: null });
        } else if (patch.enabled === false && current.enabled) {
          Object.assign(changes, { enabled: false, disabled_reason: null });
          await deliveriesRepo.failPendingDeliveries(trx, orgId, id);
        }
        if (Object.keys(patch).length === 0) return toEndpoint(current);
        const row = await repo.updateEndpoint(trx, orgId, id, { ...changes, updated_at: clock.now() });
        if (!row) throw notFound();
        return toEndpoint(row);
      });
    },

    async remove(orgId: string, id: string) {
      if (!(await repo.deleteEndpoint(db, orgId, id))) throw notFound();
    },

    async rotateSecret(orgId: string, id: string) {
      return db.transaction().execute(async (trx) => {
        const current = await repo.findEndpoint(trx, orgId, id, { lock: true });
        if (!current) throw notFound();
        const now = clock.now();
        // The secret being replaced keeps signing for 24 hours; one rotated out earlier stops now.
        const secret = newSecret();
        const { secret: previous } = openSecrets(keyring, orgId, id, current);
        const row = await repo.updateEndpoint(trx, orgId, id, {
          ...sealSecrets(keyring, orgId, id, { secret, previous }),
          previous_secret_expires_at: new Date(now.getTime() + ROTATION_OVERLAP_MS),
          updated_at: now,
        });
        if (!row) throw notFound();
        return withSecret(row, secret);
      });
    },

    async test(orgId: string, id: string) {
      return db.transaction().execute(async (trx) => {
        const endpoint = await repo.findEndpoint(trx, orgId, id, { lock: true });
        if (!endpoint) throw notFound();
        if (!endpoint.enabled) throw endpointDisabled();
        const { eventId } = await recordPing(trx, orgId, id, clock.now());
        const delivery = await deliveriesRepo.findDeliveryOfEvent(trx, orgId, id, eventId);
        if (!delivery) throw new Error('the ping delivery was not queued');
        return toDelivery(delivery);
      });
    },

    async deliveries(orgId: string, id: string, query: DeliveryListQuery & { limit: number }) {
      const scope = `webhook-deliveries:${id}`;
      const shape = { status: query.status?.slice().sort() ?? null };
      // A missing endpoint answers 404 before a bad cursor's 422, as when the endpoint was read first.
      let after: string | undefined;
      let badCursor: unknown;
      try {
        const decoded = query.cursor ? decodeCursor(query.cursor, scope, shape)[0] : undefined;
        if (decoded !== undefined && typeof decoded !== 'string') {
          throw validationError(['query', 'cursor'], 'Invalid cursor', 'value_error', { input: query.cursor });
        }
        after = decoded;
      } catch (error) {
        badCursor = error;
      }
      // The endpoint's existence and the page: one statement.
      const { found, rows } = await deliveriesRepo.listDeliveries(db, orgId, id, {
        status: query.status,
        afterEventId: after,
        limit: query.limit + 1,
      });
      if (!found) throw notFound();
      if (badCursor !== undefined) throw badCursor;
      const page = rows.slice(0, query.limit);
      const last = page.at(-1);
      return {
        items: page.map(toDelivery),
        next_cursor: rows.length > query.limit && last ? encodeCursor(scope, shape, [last.event_id]) : null,
      };
    },

    async retry(orgId: string, endpointId: string, deliveryId: string) {
      const endpoint = await existing(orgId, endpointId);
      if (!endpoint.enabled) throw endpointDisabled();
      const row =
        (await deliveriesRepo.retryDelivery(db, orgId, endpointId, deliveryId)) ??
        (await deliveriesRepo.findDelivery(db, orgId, endpointId, deliveryId));
      if (!row) throw notFound();
      return toDelivery(row);
    },
  };
}

export type WebhookEndpointsService = ReturnType<typeof createWebhookEndpointsService>;
