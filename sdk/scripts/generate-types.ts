// `npm run sdk:generate`: builds the app in-process (in-memory PGlite, no server), takes `app.swagger()` and writes
// `sdk/src/openapi.ts` and `sdk/src/operations.ts`. Run it again whenever a route schema changes; a test fails until
// it is.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../../src/app.ts';
import { openDatabase } from '../../src/db/database.ts';
import { wire } from '../../src/wiring.ts';
import { openapiTypes, operationsModule } from './openapi-types.ts';

const target = (name: string) => fileURLToPath(new URL(`../src/${name}`, import.meta.url));

const database = await openDatabase({ dataDir: 'memory://' });
try {
  const app = await buildApp(wire({ database }));
  await app.ready();
  const document = app.swagger();
  await app.close();
  writeFileSync(target('openapi.ts'), await openapiTypes(document));
  writeFileSync(target('operations.ts'), operationsModule(document));
  process.stdout.write(`wrote ${target('openapi.ts')} and ${target('operations.ts')}\n`);
} finally {
  await database.close();
}
