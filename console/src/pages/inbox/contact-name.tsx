// A contact's name (or phone) by id, from the contacts cache.
import type { Contact } from '@crm-messaging/sdk';
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';

export function contactLabel(contact: Contact): string {
  const name = [contact.first_name, contact.last_name].filter(Boolean).join(' ');
  return name || contact.phone || contact.email || contact.id;
}

export function ContactName({ id }: { id: string }) {
  const query = useQuery({
    queryKey: keys.contacts.detail(id),
    queryFn: () => api.contacts.get(id),
    staleTime: 60_000,
  });
  return <>{query.data ? contactLabel(query.data) : id}</>;
}
