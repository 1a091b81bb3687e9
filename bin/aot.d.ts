// Types of bin/aot.js (plain JavaScript: it runs before anything is compiled, on any Node), for the TypeScript
// that imports it (bench/reads.ts).
export function sourcesFingerprint(): string;
export function entry(source: string): string;
