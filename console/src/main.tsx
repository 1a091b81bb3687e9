// The console's entry: the query cache, the router (under /app) and React Aria's link navigation wired to it.
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { RouterProvider as AriaRouterProvider } from 'react-aria-components';
import { createRoot } from 'react-dom/client';
import { createBrowserRouter, Outlet, RouterProvider, useHref, useNavigate } from 'react-router';
import { after429, statusOf } from './api/client.ts';
import { routes } from './routes.tsx';
import './styles.css';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // 4xx answers are not retried: they will not change by asking again. Except a 429: the organization's budget
      // for this second was spent (a burst of live events refetches several reads at once), so a read asks again
      // after its Retry-After rather than leaving the page on an error.
      retry: (count, error) => {
        const status = statusOf(error);
        if (status === 429) return count < 4;
        return count < 2 && !(status! < 500);
      },
      retryDelay: (count, error) => (statusOf(error) === 429 ? after429(error) : Math.min(1000 * 2 ** count, 30_000)),
      refetchOnWindowFocus: true,
    },
    mutations: {
      // A change answered 429 did nothing (the budget is checked before the route runs), so it is sent again after
      // its Retry-After, twice at most, with the same body and Idempotency-Key: the page's own reads share the
      // organization's budget and must not make a person's "Send" fail (D154). Every other refusal is shown (D111).
      retry: (count, error) => statusOf(error) === 429 && count < 2,
      retryDelay: (_count, error) => after429(error),
    },
  },
});

function AriaRouting() {
  const navigate = useNavigate();
  return (
    <AriaRouterProvider navigate={(to) => navigate(to)} useHref={useHref}>
      <Outlet />
    </AriaRouterProvider>
  );
}

const router = createBrowserRouter([{ Component: AriaRouting, children: routes }], { basename: '/app' });

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  </StrictMode>,
);
