// The one form helper: a mutation whose refusal is split into field messages (422 `loc`) and a form message
// (409 code as a sentence). Fields read their message with `fieldError(name)`; the form shows `FormError`.
import { type UseMutationOptions, useMutation } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { type ShownError, showError } from './errors.ts';

export function useApiForm<TData, TVariables>(options: UseMutationOptions<TData, Error, TVariables>) {
  const mutation = useMutation(options);
  const shown: ShownError = mutation.error ? showError(mutation.error) : { fields: {}, message: undefined };
  return {
    ...mutation,
    shown,
    fieldError: (name: string): string | undefined => shown.fields[name],
    /** The first message at `name` or anywhere under it (`audience` for `audience.country.0`). */
    fieldErrorUnder: (name: string): string | undefined =>
      Object.entries(shown.fields).find(([key]) => key === name || key.startsWith(`${name}.`))?.[1],
  };
}

/** The form-level message, announced and focused so that a keyboard user lands on it. */
export function FormError({ message }: { message: string | undefined }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (message) ref.current?.focus();
  }, [message]);
  if (!message) return null;
  return (
    <div ref={ref} role="alert" tabIndex={-1} className="form-error">
      {message}
    </div>
  );
}
