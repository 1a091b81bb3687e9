// A contact's name (or phone, email, id) in one line.
import type { Contact } from '@crm-messaging/sdk';

/** A contact by name, else phone, email or id; a Conversation's `contact` (decisions §19) is enough. */
export function contactLabel(
  contact: Pick<Contact, 'id' | 'first_name' | 'last_name' | 'phone'> & { email?: Contact['email'] },
): string {
  const name = [contact.first_name, contact.last_name].filter(Boolean).join(' ');
  return name || contact.phone || contact.email || contact.id;
}
