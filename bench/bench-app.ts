// The in-process API of the benches whose workers deliver webhooks (broadcasts with BENCH_ENDPOINT, webhooks,
// webhook-lag): unlimited budget, endpoints allowed on 127.0.0.1, and one keyring that seals the endpoints' secrets
// here and opens them in the `crm worker` children (pass them SECRETS_KEY).

import { buildApp } from '../src/app.ts';
import type { Database } from '../src/db/database.ts';
import { generateKeyringText, parseKeyring } from '../src/lib/secrets-box.ts';
import { wire } from '../src/wiring.ts';
import { unlimited } from './bench-database.ts';

export const SECRETS_KEY = generateKeyringText();

export const benchApp = (database: Database, adminToken: string) =>
  buildApp(
    wire({
      database,
      rateLimitStore: unlimited,
      adminToken,
      webhookAllowHosts: ['127.0.0.1'],
      keyring: parseKeyring(SECRETS_KEY),
    }),
  );
