// First start on an empty embedded database without ADMIN_TOKEN: a demo organization on trial with a sandbox
// number, its API key, and a demo admin with a one-time sign-in link to the console (decisions §17), printed once,
// so that a newcomer can make a first request and reach the inbox straight away. Everything goes through the
// operator's and the users' services: the same rules as /admin/v1 and `crm user add`.
import type { Kysely } from 'kysely';
import type { DB } from './db/schema.ts';
import { anyOrganization, findAppState, insertAppState } from './modules/operator/operator.repo.ts';
import type { OperatorService } from './modules/operator/operator.service.ts';
import type { UsersService } from './modules/users/users.service.ts';

const DEMO_FLAG = 'demo_seeded';
const TRIAL_DAYS = 30;
export const DEMO_ADMIN_EMAIL = 'admin@demo.example';

export interface DemoDeps {
  db: Kysely<DB>;
  now: () => Date;
  operator: OperatorService;
  users: UsersService;
}

export interface DemoResult {
  orgId: string;
  apiKey: string;
  admin: { email: string; signInUrl: string; signInUrlExpiresAt: Date };
}

/** Creates the demo organization and its admin unless the database has any organization or was seeded before. */
export async function seedDemo(deps: DemoDeps): Promise<DemoResult | undefined> {
  const { db, operator, users } = deps;
  if ((await findAppState(db, DEMO_FLAG)) || (await anyOrganization(db))) return undefined;
  const trialEnds = new Date(deps.now().getTime() + TRIAL_DAYS * 24 * 3600 * 1000);
  const org = await operator.createOrganization({
    name: 'Demo organization',
    plan: 'free',
    trial: true,
    trial_ends_at: trialEnds.toISOString(),
  });
  await operator.createMessagingAccount(org.id, {
    display_name: 'Demo messaging account',
    numbers: [{ phone: '+15550100001', display_name: 'Demo sandbox number' }],
  });
  const key = await operator.createApiKey(org.id, { name: 'demo' });
  const admin = await users.invite(org.id, { email: DEMO_ADMIN_EMAIL, name: 'Demo admin', role: 'admin' });
  await insertAppState(db, DEMO_FLAG, { org_id: org.id });
  return {
    orgId: org.id,
    apiKey: key.key,
    admin: { email: admin.email, signInUrl: admin.sign_in_url, signInUrlExpiresAt: admin.sign_in_url_expires_at },
  };
}

export function demoBanner(result: DemoResult, baseUrl: string): string {
  return [
    '',
    '  Demo organization created (on a 30-day trial, with a sandbox number).',
    `  API key (shown only this once): ${result.apiKey}`,
    '',
    '  Try it:',
    `    curl -s ${baseUrl}/v1/me -H "Authorization: Bearer ${result.apiKey}"`,
    '',
    `  The console: ${baseUrl}/app`,
    `  Sign in as ${result.admin.email}: open this one-time link (valid 24 hours) and choose a password:`,
    `    ${result.admin.signInUrl}`,
    '',
    `  API reference: ${baseUrl}/docs`,
    '',
  ].join('\n');
}
