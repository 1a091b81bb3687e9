// `npm run sdk:generate`: builds the app in-process (in-memory PGlite, no server), takes `app.swagger()` and writes
// `sdk/src/openapi.ts`. Run it again whenever a route schema changes; a test fails until it is.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../../src/app.ts';
import { openDatabase } from '../../src/db/database.ts';
import { wire } from '../../src/wiring.ts';
import { openapiTypes } from './openapi-types.ts';

const target = fileURLToPath(new URL('../src/openapi.ts', import.meta.url));

const database = await openDatabase({ dataDir: 'memory://' });
try {
  const app = await buildApp(wire({ database }));
  await app.ready();
  const document = app.swagger();
  await app.close();
  writeFileSync(target, await openapiTypes(document));
  process.stdout.write(`wrote ${target}\n`);
} finally {
  await database.close();
}
