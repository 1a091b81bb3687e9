// Choose a password from a one-time sign-in link (decisions §17): /app/set-password#token=… (the token sits in the
// fragment, so it never reaches a server log). The server holds the rules (at least 10 characters) and answers
// them as a 422 at the field; a used or expired link answers 410 sign_in_link_expired.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useLocation, useNavigate } from 'react-router';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { TextInput } from '../../ui/fields.tsx';
import { ApiForm, useApiForm } from '../../ui/form.tsx';
import { usePageTitle } from '../../ui/page.tsx';
import { ErrorState, Loading } from '../../ui/states.tsx';

export function ChoosePasswordPage() {
  usePageTitle('Choose a password');
  const token = new URLSearchParams(useLocation().hash.slice(1)).get('token') ?? '';
  const [password, setPassword] = useState('');
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const link = useQuery({
    queryKey: ['sign-in-link', token],
    queryFn: () => api.console.signInLinks.lookUp({ token }),
    enabled: token !== '',
    retry: false,
  });
  const form = useApiForm({
    mutationFn: (body: { token: string; password: string }) => api.console.signInLinks.accept(body),
    onSuccess: (data) => {
      queryClient.setQueryData(keys.session, data);
      navigate('/inbox', { replace: true });
    },
  });
  return (
    <main className="auth">
      <h1>Choose a password</h1>
      {token === '' ? (
        <p role="alert">This page opens from a sign-in link. Ask an admin of your organization for one.</p>
      ) : link.isPending ? (
        <Loading />
      ) : link.isError ? (
        <ErrorState error={link.error} />
      ) : (
        <ApiForm form={form} submit="Save and sign in" onSubmit={() => form.mutate({ token, password })}>
          <p>
            For <strong>{link.data.email}</strong>.
          </p>
          <TextInput
            label="New password"
            name="password"
            type="password"
            autoComplete="new-password"
            description="At least 10 characters."
            isRequired
            value={password}
            onChange={setPassword}
          />
        </ApiForm>
      )}
    </main>
  );
}
