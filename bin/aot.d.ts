// Types of bin/aot.js (plain JavaScript: it runs before anything is compiled, on any Node), for the TypeScript
// that imports it (bench/reads.ts).
/** The fingerprint of the sources under `dir` (default: this project). */
export function sourcesFingerprint(dir?: string): string;
/** The file to run for `source` (e.g. `src/main.ts`) in `dir` (default: this project): dist/'s copy while current. */
export function entry(source: string, dir?: string): string;
/** Imports the module `entry()` chooses for a source of this project (its compiled copy while current). */
export function importEntry<T = unknown>(source: string): Promise<T>;
