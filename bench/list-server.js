// The API of `npm run bench:contacts` (bench/run.ts) in its own process, so that the bench reads the API's own RSS
// (decisions D194): the app of the one wiring on a pool of 20, without a rate limit (the bench measures the list,
// not the budget), as the bench ran it in its own process before. Plain JavaScript that loads the server through
// bin/aot.js: the compiled dist/ while current, as `crm serve` runs (no type stripper in the process).
//
//   DATABASE_URL, PORT (the bench sets them)
import { importEntry as load } from '../bin/aot.js';

const [{ buildApp }, { openDatabase }, { wire }] = await Promise.all([
  load('src/app.ts'),
  load('src/db/database.ts'),
  load('src/wiring.ts'),
]);
const database = await openDatabase({ databaseUrl: process.env.DATABASE_URL, poolSize: 20 });
const unlimited = { hit: async () => 1, close: async () => {} };
const app = await buildApp(wire({ database, rateLimitStore: unlimited }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.once('SIGTERM', async () => {
  await app.close();
  await database.close();
  process.exit(0);
});
