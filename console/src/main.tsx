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
      // 4xx answers are not retried: they will not change by asking again.
      retry: (count, error) => count < 2 && !((error as { status?: number }).status! < 500),
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
