// A contact as the API shows it (contract: Contact), from its row and its property values: one shape for the
// responses and for the events that carry a contact (decisions §11).
import type { ContactRecord } from './contacts.repo.ts';
import type { Contact } from './contacts.schemas.ts';

export function present(row: ContactRecord, properties: Contact['properties']): Contact {
  return {
    ...row,
    origin: row.origin as Contact['origin'],
    messaging_status: row.messaging_status as Contact['messaging_status'],
    properties,
    last_contacted_at: row.last_contacted_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
