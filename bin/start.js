// `npm start`: the API and the worker in one process (src/main.ts), compiled ahead of time when the build in dist/ is
// current, else the .ts sources (bin/aot.js, decisions D187).
import { pathToFileURL } from 'node:url';
import { entry } from './aot.js';

await import(pathToFileURL(entry('src/main.ts')).href);
