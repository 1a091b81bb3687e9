import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { described, IdParam, NoContent, v1Errors } from '../../http/schemas.ts';
import {
  CONTACT_PAGE_SIZE,
  ContactBatch,
  ContactBatchResult,
  ContactInput,
  ContactListQuery,
  ContactPage,
  ContactPatch,
  ContactSchema,
} from './contacts.schemas.ts';
import type { ContactsService } from './contacts.service.ts';

const tags = ['Contacts'];
const Params = IdParam('contact_id');
const duplicate = {
  409: {
    codes: ['duplicate_contact'],
    description:
      'Duplicate email (case-insensitive), phone or social handle (case-insensitive): `{code: "duplicate_contact", ' +
      'field, conflicting_contact_id, first_name, last_name, email, phone, social_handle}`.',
  },
};

export function contactsRoutes(parent: FastifyInstance, contacts: ContactsService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/contacts',
    {
      schema: {
        tags,
        summary: 'List contacts',
        description:
          'Keyset pagination for every sort. A walk (first page, then each `next_cursor`) lists the contacts as ' +
          'they stood when its first page was read, each exactly once; contacts created later are not part of it. ' +
          'Cursors live 24 hours. `recent` is updated_at then id, descending by default; the other sorts are ' +
          'ascending by default, and contacts lacking the sorted value come last in either direction.',
        operationId: 'listContacts',
        querystring: ContactListQuery,
        response: { 200: described('A page of contacts.', ContactPage), ...v1Errors({ 422: [] }) },
      },
    },
    async (request) => {
      const { orgId, org } = authOf(request);
      return contacts.list(orgId, org.timezone, { ...request.query, limit: request.query.limit ?? CONTACT_PAGE_SIZE });
    },
  );

  app.post(
    '/contacts',
    {
      schema: {
        tags,
        summary: 'Create a contact',
        description:
          '`origin` is `API`. `messaging_status` starts `unverified` with a phone, `unavailable` without. The contact ' +
          'starts in the initial funnel stage unless `funnel_stage_id` is given.',
        operationId: 'createContact',
        body: ContactInput,
        response: { 201: described('The contact created.', ContactSchema), ...v1Errors({ ...duplicate, 422: [] }) },
      },
    },
    async (request, reply) => reply.code(201).send(await contacts.create(authOf(request).orgId, request.body)),
  );

  app.post(
    '/contacts/batch-upsert',
    {
      schema: {
        tags,
        summary: 'Create or update up to 100 contacts',
        description:
          'decisions §12: each item carries its `match_on` field; one that matches a live contact updates it with ' +
          'PATCH semantics (`properties` merged key by key), otherwise it is created as `POST /v1/contacts` would. ' +
          'All or nothing: an invalid item or two items with the same match value are a 422 at ' +
          '`["body","items",INDEX,…]`; a duplicate on another field is the 409 `duplicate_contact` with `index`. ' +
          'One call counts once against the rate budget.',
        operationId: 'batchUpsertContacts',
        body: ContactBatch,
        response: {
          200: described('One result per item, in input order.', ContactBatchResult),
          ...v1Errors({ ...duplicate, 422: [] }),
        },
      },
    },
    async (request) => contacts.batchUpsert(authOf(request).orgId, request.body),
  );

  app.get(
    '/contacts/:contact_id',
    {
      schema: {
        tags,
        summary: 'Read a contact',
        description: 'With its custom property values, keyed by property key.',
        operationId: 'getContact',
        params: Params,
        response: { 200: described('The contact.', ContactSchema), ...v1Errors({ 404: [], 422: [] }) },
      },
    },
    async (request) => contacts.get(authOf(request).orgId, request.params.contact_id),
  );

  app.patch(
    '/contacts/:contact_id',
    {
      schema: {
        tags,
        summary: 'Update a contact (partial; null clears)',
        description:
          'Setting a phone on a contact without one makes it `unverified`; a new phone also; removing it makes it ' +
          '`unavailable`. `messaging_status`, `inbox_handle` and `origin` cannot be written.',
        operationId: 'updateContact',
        params: Params,
        body: ContactPatch,
        response: {
          200: described('The contact as updated.', ContactSchema),
          ...v1Errors({ 404: [], ...duplicate, 422: [] }),
        },
      },
    },
    async (request) => contacts.update(authOf(request).orgId, request.params.contact_id, request.body),
  );

  app.delete(
    '/contacts/:contact_id',
    {
      schema: {
        tags,
        summary: 'Delete a contact',
        description: 'Removes it from every read and frees its email, phone and social handle.',
        operationId: 'deleteContact',
        params: Params,
        response: { 204: NoContent('Deleted.'), ...v1Errors({ 404: [], 422: [] }) },
      },
    },
    async (request, reply) => {
      await contacts.remove(authOf(request).orgId, request.params.contact_id);
      return reply.code(204).send(null);
    },
  );
}
