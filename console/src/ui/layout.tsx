// The signed-in frame: a skip link, the navigation (agents see only the inbox and contacts: decisions §17), the
// person's name, their availability (decisions §19) and sign-out, and the page. Live updates run while a person is
// signed in. On a narrow screen the navigation folds behind a "Menu" button (a disclosure: `aria-expanded`), closed
// again after each navigation.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Button } from 'react-aria-components';
import { Navigate, NavLink, Outlet, useLocation, useNavigate } from 'react-router';
import { api, statusOf } from '../api/client.ts';
import { useLiveUpdates } from '../api/live.ts';
import { AvailabilitySwitch } from './availability.tsx';
import { SessionContext, useSessionQuery } from './session.tsx';
import { ErrorState, Loading } from './states.tsx';

const AREAS = [
  { to: '/inbox', label: 'Inbox', admin: false },
  { to: '/contacts', label: 'Contacts', admin: false },
  { to: '/broadcasts', label: 'Broadcasts', admin: true },
  { to: '/templates', label: 'Templates', admin: true },
  { to: '/developers', label: 'Developers', admin: true },
  { to: '/settings', label: 'Settings', admin: true },
];

export function SignedInLayout() {
  const query = useSessionQuery();
  const location = useLocation();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const signOut = useMutation({
    mutationFn: () => api.console.session.signOut(),
    onSettled: () => {
      queryClient.clear();
      navigate('/sign-in', { replace: true });
    },
  });
  useLiveUpdates(query.isSuccess);
  const [menuOpen, setMenuOpen] = useState(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new address closes the menu.
  useEffect(() => setMenuOpen(false), [location.pathname]);

  if (query.isPending) return <Loading label="Opening the console…" />;
  // A failed refetch keeps the frame it has (D239): only a session never read, or ended, replaces the page.
  if (query.isError && (query.data === undefined || statusOf(query.error) === 401)) {
    const status = statusOf(query.error);
    if (status === 401 || status === 404) {
      const next = `${location.pathname}${location.search}`;
      return <Navigate to={`/sign-in${next !== '/' ? `?next=${encodeURIComponent(next)}` : ''}`} replace />;
    }
    return (
      <main className="main">
        <ErrorState error={query.error} retry={() => void query.refetch()} />
      </main>
    );
  }
  const { user, organization } = query.data as NonNullable<typeof query.data>;
  const areas = AREAS.filter((area) => !area.admin || user.role === 'admin');
  return (
    <SessionContext.Provider value={query.data}>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <div className="shell">
        <header className="topbar">
          <span className="brand">{organization.name}</span>
          <Button
            className="menu-button"
            aria-expanded={menuOpen}
            aria-controls="main-nav"
            onPress={() => setMenuOpen((open) => !open)}
          >
            <span aria-hidden="true">☰</span> Menu
          </Button>
          <nav aria-label="Main" id="main-nav" className={menuOpen ? 'nav nav-open' : 'nav'}>
            <ul>
              {areas.map((area) => (
                <li key={area.to}>
                  <NavLink to={area.to}>{area.label}</NavLink>
                </li>
              ))}
            </ul>
          </nav>
          <div className="who">
            <span className="who-name">{user.name ?? user.email}</span>
            <AvailabilitySwitch />
            <Button onPress={() => signOut.mutate()} isDisabled={signOut.isPending}>
              Sign out
            </Button>
          </div>
        </header>
        <main id="main" className="main" tabIndex={-1}>
          <Outlet />
        </main>
      </div>
    </SessionContext.Provider>
  );
}

/** Admin-only areas answer agents with a page that says so (the server answers them 403 forbidden_for_role). */
export function AdminOnly({ children }: { children: React.ReactNode }) {
  const query = useSessionQuery();
  if (query.data && query.data.user.role !== 'admin')
    return (
      <section className="page">
        <h1>Not available</h1>
        <p>This area is for admins. Ask an admin of your organization.</p>
      </section>
    );
  return <>{children}</>;
}
