// The console's entry: the query cache, the router (under /app) and React Aria's link navigation wired to it.
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { RouterProvider as AriaRouterProvider } from 'react-aria-components';
import { createRoot } from 'react-dom/client';
import { createBrowserRouter, Outlet, RouterProvider, useHref, useNavigate } from 'react-router';
import { after429, readRetryDelay, retryRead, statusOf } from './api/client.ts';
import { routes } from './routes.tsx';
import { Loading } from './ui/states.tsx';
import './styles.css';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A read answered 429 asks again after its Retry-After rather than leaving the page on an error (D239).
      retry: retryRead,
      retryDelay: readRetryDelay,
      refetchOnWindowFocus: true,
    },
    mutations: {
      // A change answered 429 did nothing (the budget is checked before the route runs), so it is sent again after
      // its Retry-After, twice at most, with the same body and Idempotency-Key: the page's own reads share the
      // person's budget and must not make a person's "Send" fail (D154). Every other refusal is shown (D111).
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

/** What shows while the first page's lazily loaded area arrives (React Router asks for it: D242). */
function OpeningPage() {
  return <Loading label="Opening the console…" />;
}

const router = createBrowserRouter([{ Component: AriaRouting, HydrateFallback: OpeningPage, children: routes }], {
  basename: '/app',
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  </StrictMode>,
);
