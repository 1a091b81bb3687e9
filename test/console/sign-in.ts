// A signed-in admin for a browser suite file: the operator invites one, and the person chooses a password from the
// sign-in link in the page (the same path a new admin takes), landing on the inbox.
import type { Page } from 'playwright-core';
import type { ConsoleServer } from './server.ts';

export const PASSWORD = 'a long enough password';

export async function signInNewAdmin(server: ConsoleServer, page: Page, orgId: string, email: string): Promise<void> {
  await signInNewPerson(server, page, orgId, { email, name: 'Ada Admin', role: 'admin' });
}

/** A person of `role` invited by the operator, signed in through their link in `page`. */
export async function signInNewPerson(
  server: ConsoleServer,
  page: Page,
  orgId: string,
  person: { email: string; name: string; role: 'admin' | 'agent' },
): Promise<void> {
  const invited = await server.admin('POST', `/organizations/${orgId}/users`, person);
  if (invited.status !== 201) throw new Error(`invite: ${invited.status} ${JSON.stringify(invited.body)}`);
  await signInFromLink(page, invited.body.sign_in_url);
}

/** A person opens their sign-in link, chooses a password and lands on the inbox. */
export async function signInFromLink(page: Page, link: string): Promise<void> {
  await page.goto(link);
  await page.getByLabel('New password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Save and sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor();
}
