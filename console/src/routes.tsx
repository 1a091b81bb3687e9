// The routes in one table (style.md, the console). Areas load on demand, so the first page after sign-in carries
// only the frame and the inbox (decisions §17: at most 250 KB of gzipped JavaScript).
import type { ComponentType } from 'react';
import { Navigate, type RouteObject } from 'react-router';
import { ChoosePasswordPage } from './pages/session/choose-password.tsx';
import { SignInPage } from './pages/session/sign-in.tsx';
import { automationRoutes } from './pages/settings/automation/automation-routes.ts';
import { AdminOnly, SignedInLayout } from './ui/layout.tsx';
import { Page } from './ui/page.tsx';

type Module = Record<string, unknown>;

/** A lazily loaded page: `load` imports the area, `name` is the component it exports. */
function area(path: string, load: () => Promise<Module>, name: string, admin = false): RouteObject {
  return {
    path,
    lazy: async () => {
      const Component = (await load())[name] as ComponentType;
      return {
        Component: admin
          ? () => (
              <AdminOnly>
                <Component />
              </AdminOnly>
            )
          : Component,
      };
    },
  };
}

function NotFound() {
  return (
    <Page title="Not found">
      <p>There is no page at this address.</p>
    </Page>
  );
}

export const routes: RouteObject[] = [
  { path: '/sign-in', Component: SignInPage },
  { path: '/set-password', Component: ChoosePasswordPage },
  {
    path: '/',
    Component: SignedInLayout,
    children: [
      { index: true, element: <Navigate to="/inbox" replace /> },
      // One route for the list and a conversation: moving between conversations (`j`/`k`) keeps the page (D288).
      area('inbox/:conversationId?', () => import('./pages/inbox/inbox.tsx'), 'InboxPage'),
      area('contacts', () => import('./pages/contacts/contacts.tsx'), 'ContactsPage'),
      area('contacts/new', () => import('./pages/contacts/contact-edit.tsx'), 'NewContactPage'),
      area('contacts/import', () => import('./pages/contacts/contact-import.tsx'), 'ImportContactsPage'),
      area('contacts/:contactId', () => import('./pages/contacts/contact.tsx'), 'ContactPage'),
      area('contacts/:contactId/edit', () => import('./pages/contacts/contact-edit.tsx'), 'EditContactPage'),
      area('broadcasts', () => import('./pages/broadcasts/broadcasts.tsx'), 'BroadcastsPage', true),
      area('broadcasts/new', () => import('./pages/broadcasts/broadcast-new.tsx'), 'NewBroadcastPage', true),
      area('broadcasts/:broadcastId', () => import('./pages/broadcasts/broadcast.tsx'), 'BroadcastPage', true),
      area('templates', () => import('./pages/templates/templates.tsx'), 'TemplatesPage', true),
      area('templates/new', () => import('./pages/templates/template-new.tsx'), 'NewTemplatePage', true),
      area('developers', () => import('./pages/developers/developers.tsx'), 'DevelopersPage', true),
      area(
        'developers/webhooks/:endpointId',
        () => import('./pages/developers/webhook-endpoint.tsx'),
        'WebhookEndpointPage',
        true,
      ),
      ...automationRoutes.map(([path, load, name]) => area(path, load, name, true)),
      area('settings', () => import('./pages/settings/settings.tsx'), 'SettingsPage', true),
      area('settings/teams', () => import('./pages/settings/teams.tsx'), 'TeamsPage', true),
      area(
        'settings/canned-responses',
        () => import('./pages/settings/canned-responses.tsx'),
        'CannedResponsesPage',
        true,
      ),
      { path: '*', Component: NotFound },
    ],
  },
];
