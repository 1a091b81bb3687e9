// Sign in (decisions §17, flow 1): email and password; after it, the page asked for or the inbox.
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { TextInput } from '../../ui/fields.tsx';
import { ApiForm, useApiForm } from '../../ui/form.tsx';
import { usePageTitle } from '../../ui/page.tsx';

/** Only paths inside the console are followed after sign-in (no open redirect). */
export function safeNext(next: string | null): string {
  return next?.startsWith('/') && !next.startsWith('//') ? next : '/inbox';
}

export function SignInPage() {
  usePageTitle('Sign in');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const form = useApiForm({
    mutationFn: (body: { email: string; password: string }) => api.console.session.signIn(body),
    onSuccess: (data) => {
      queryClient.setQueryData(keys.session, data);
      navigate(safeNext(params.get('next')), { replace: true });
    },
  });
  return (
    <main className="auth">
      <h1>Sign in</h1>
      <ApiForm
        form={form}
        submit={form.isPending ? 'Signing in…' : 'Sign in'}
        onSubmit={() => form.mutate({ email, password })}
      >
        <TextInput
          label="Email"
          name="email"
          type="email"
          autoComplete="username"
          isRequired
          value={email}
          onChange={setEmail}
        />
        <TextInput
          label="Password"
          name="password"
          type="password"
          autoComplete="current-password"
          isRequired
          value={password}
          onChange={setPassword}
        />
      </ApiForm>
    </main>
  );
}
