// `npm start`: the API and the worker in one process (src/main.ts), compiled ahead of time when the build in dist/ is
// current, else the .ts sources (bin/aot.js, decisions D187), with the server's heap flags (bin/node-flags.js, D194).
import { importEntry } from './aot.js';
import { withServerFlags } from './node-flags.js';

withServerFlags();
await importEntry('src/main.ts');
