// The V8 heap settings of the server's long-running roles: `npm start` (bin/start.js) and `crm serve` and `crm
// worker` (bin/crm, bin/crm.js, `npx crm`), decisions D28 and D194. One list, applied the same way by every way in:
// a process started without them runs again in its own place with them (process.execve: same pid, no parent left).
//
// --max-semi-space-size=4: a young generation of 2 × 4 MB; the default (up to 2 × 64 MB) is resident memory for
//   little gain (D28), and 2 × 2 MB scavenged twice as often for the same memory in the end (D194).
// --max-old-space-size=2000: a ceiling far above what a process holds live (40–60 MB) that also lowers how far V8
//   lets the old generation grow past what is live before a full collection: up to 4× the live heap with a ceiling
//   of 2 GB or more (4.2 GB by default here), 2× below it. Under load the old generation is mostly requests that
//   were promoted while in flight and died there, so that factor was most of the resident memory (D194).
export const SERVER_NODE_FLAGS = ['--max-semi-space-size=4', '--max-old-space-size=2000'];

const nameOf = (flag) => flag.split('=')[0].replaceAll('_', '-');

/** The server's flags that neither node's command line nor NODE_OPTIONS set (an operator's own values win). */
export function missingServerFlags(execArgv = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? '') {
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)].filter(Boolean).map(nameOf));
  return SERVER_NODE_FLAGS.filter((flag) => !given.has(nameOf(flag)));
}

/** Runs this script again in this process's place with the flags it lacks; returns when none is missing. */
export function withServerFlags() {
  const missing = missingServerFlags();
  if (missing.length === 0 || typeof process.execve !== 'function') return;
  process.execve(process.execPath, [process.execPath, ...missing, ...process.execArgv, ...process.argv.slice(1)]);
}
