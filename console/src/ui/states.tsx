// Loading, empty and error states, the same on every page.
import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Button } from 'react-aria-components';
import { showError } from './errors.ts';

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p className="state" role="status" aria-live="polite">
      {label}
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="state state-empty">{children}</p>;
}

export function ErrorState({ error, retry }: { error: unknown; retry?: () => void }) {
  return (
    <div className="state state-error" role="alert">
      <p>{showError(error).message ?? 'Could not load this.'}</p>
      {retry ? <Button onPress={retry}>Try again</Button> : null}
    </div>
  );
}

/** Renders the query's data, or its loading or error state; `isEmpty` picks the empty state. */
export function QueryView<T>({
  query,
  isEmpty,
  empty,
  children,
}: {
  query: UseQueryResult<T>;
  isEmpty?: (data: T) => boolean;
  empty?: ReactNode;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) return <Loading />;
  // A failed refetch keeps what is shown (D239): the error replaces only what was never loaded.
  if (query.isError && query.data === undefined)
    return <ErrorState error={query.error} retry={() => void query.refetch()} />;
  const data = query.data as T;
  if (isEmpty?.(data)) return <Empty>{empty ?? 'Nothing here yet.'}</Empty>;
  return <>{children(data)}</>;
}
