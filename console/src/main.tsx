// The console's entry: the query cache, the router (under /app) and React Aria's link navigation wired to it.
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { RouterProvider as AriaRouterProvider } from 'react-aria-components';
import { createRoot } from 'react-dom/client';
import { createBrowserRouter, Outlet, RouterProvider, useHref, useNavigate } from 'react-router';
import { routes } from './routes.tsx';
import './styles.css';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // 4xx answers are not retried: they will not change by asking again. Except a 429: the organization's budget
      // for this second was spent (a burst of live events refetches several reads at once), so a read asks again
      // after its Retry-After rather than leaving the page on an error. Changes are never retried (D111).
      retry: (count, error) => {
        const status = (error as { status?: number }).status;
        if (status === 429) return count < 4;
        return count < 2 && !(status! < 500);
      },
      retryDelay: (count, error) => {
        const { status, headers } = error as { status?: number; headers?: Headers };
        if (status !== 429) return Math.min(1000 * 2 ** count, 30_000);
        const after = Number(headers?.get('retry-after'));
        return (Number.isFinite(after) && after > 0 ? after * 1000 : 1000) + Math.random() * 300;
      },
      refetchOnWindowFocus: true,
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
