// The project's directory (package.json, console/dist, data/, build/), whichever copy of the code runs: this module
// is src/lib/project-dir.ts in the sources and dist/src/lib/project-dir.js once compiled ahead of time
// (tsconfig.build.json, bin/aot.js, decisions D187), one folder deeper.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const compiled = import.meta.url.endsWith('.js');

export const PROJECT_DIR = fileURLToPath(new URL(compiled ? '../../../' : '../../', import.meta.url));

/** A path inside the project's directory. */
export function projectPath(...parts: string[]): string {
  return join(PROJECT_DIR, ...parts);
}
