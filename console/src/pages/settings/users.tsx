// Users: invite by name and email (the one-time sign-in link shown to pass on), a new link for one who lost theirs,
// change a role, remove after a confirmation.
import type { InvitedUser, ConsoleUser as User, UserRole } from '@crm-messaging/sdk/console';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Button } from 'react-aria-components';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { ConfirmButton } from '../../ui/confirm.tsx';
import { showError } from '../../ui/errors.ts';
import { SelectInput, TextInput } from '../../ui/fields.tsx';
import { ApiForm, FormError, useApiForm } from '../../ui/form.tsx';
import { ShownOnce } from '../../ui/secret.tsx';
import { useSession, useTime } from '../../ui/session.tsx';
import { QueryView } from '../../ui/states.tsx';

const ROLES = [
  { id: 'admin', label: 'Admin' },
  { id: 'agent', label: 'Agent' },
];

export function UsersSection() {
  const queryClient = useQueryClient();
  const time = useTime();
  const { user: me } = useSession();
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<UserRole>('agent');
  const [invited, setInvited] = useState<InvitedUser | null>(null);
  const [link, setLink] = useState<{ email: string; url: string } | null>(null);
  const list = useQuery({ queryKey: keys.users.list(), queryFn: () => api.console.users.list() });
  const refresh = () => void queryClient.invalidateQueries({ queryKey: keys.users.all });
  const invite = useApiForm({
    mutationFn: () => api.console.users.invite({ email, role, ...(name.trim() ? { name: name.trim() } : {}) }),
    onSuccess: (user) => {
      setInvited(user);
      setLink(null);
      setEmail('');
      setName('');
      refresh();
    },
  });
  const update = useMutation({
    mutationFn: ({ id, role }: { id: string; role: UserRole }) => api.console.users.update(id, { role }),
    onSuccess: refresh,
  });
  const remove = useMutation({ mutationFn: (id: string) => api.console.users.remove(id), onSuccess: refresh });
  const newLink = useMutation({
    mutationFn: (user: User) =>
      api.console.users.newSignInLink(user.id).then((answer) => ({ email: user.email, url: answer.sign_in_url })),
    onSuccess: (issued) => {
      setLink(issued);
      setInvited(null);
    },
  });
  const error = update.error ?? remove.error ?? newLink.error;
  return (
    <section className="card" aria-labelledby="users-title">
      <h2 id="users-title">Users</h2>
      <FormError message={error ? showError(error).message : undefined} />
      <QueryView query={list}>
        {(page) => (
          <ul className="settings-list">
            {page.items.map((user) => (
              <li key={user.id}>
                <span>
                  <strong>{user.name ?? user.email}</strong> {user.email} · last sign-in {time(user.last_sign_in_at)}
                </span>
                <span className="actions">
                  <SelectInput
                    label={`Role of ${user.email}`}
                    name="role"
                    value={user.role}
                    onChange={(value) => value && update.mutate({ id: user.id, role: value as UserRole })}
                    options={ROLES}
                  />
                  {user.id === me.id ? null : (
                    <Button onPress={() => newLink.mutate(user)} isDisabled={newLink.isPending}>
                      New sign-in link for {user.email}
                    </Button>
                  )}
                  {user.id === me.id ? null : (
                    <ConfirmButton
                      label={`Remove ${user.email}`}
                      title="Remove this user?"
                      confirmLabel="Remove user"
                      onConfirm={() => remove.mutate(user.id)}
                    >
                      {user.email} will be signed out and can no longer sign in.
                    </ConfirmButton>
                  )}
                </span>
              </li>
            ))}
          </ul>
        )}
      </QueryView>
      {invited ? <ShownOnce label="Sign-in link" value={invited.sign_in_url} /> : null}
      {link ? <ShownOnce label={`Sign-in link for ${link.email}`} value={link.url} /> : null}
      <ApiForm
        form={invite}
        inline
        label="Invite a user"
        submit="Invite user"
        onSubmit={() => invite.mutate(undefined)}
      >
        <TextInput label="Name of the new user" name="name" value={name} onChange={setName} />
        <TextInput
          label="Email of the new user"
          name="email"
          type="email"
          isRequired
          value={email}
          onChange={setEmail}
        />
        <SelectInput
          label="Role"
          name="new-role"
          field="role"
          value={role}
          onChange={(v) => setRole((v ?? 'agent') as UserRole)}
          options={ROLES}
        />
      </ApiForm>
    </section>
  );
}
