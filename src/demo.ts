// First start on an empty embedded database without ADMIN_TOKEN: a demo organization on trial with a sandbox
// number, and its API key printed once, so that a newcomer can make a first request straight away.
import type { Kysely } from 'kysely';
import type { DB } from './db/schema.ts';
import type { Clock } from './lib/clock.ts';
import { anyOrganization, findAppState, insertAppState } from './modules/operator/operator.repo.ts';
import { createOperatorService } from './modules/operator/operator.service.ts';

const DEMO_FLAG = 'demo_seeded';
const TRIAL_DAYS = 30;

export interface DemoResult {
  orgId: string;
  apiKey: string;
}

/** Creates the demo organization unless the database has any organization or was seeded before. */
export async function seedDemo(db: Kysely<DB>, clock: Clock): Promise<DemoResult | undefined> {
  if ((await findAppState(db, DEMO_FLAG)) || (await anyOrganization(db))) return undefined;
  const operator = createOperatorService({ db, clock, platform: 'sandbox' });
  const trialEnds = new Date(clock.now().getTime() + TRIAL_DAYS * 24 * 3600 * 1000);
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
  await insertAppState(db, DEMO_FLAG, { org_id: org.id });
  return { orgId: org.id, apiKey: key.key };
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
    `  API reference: ${baseUrl}/docs`,
    '',
  ].join('\n');
}
