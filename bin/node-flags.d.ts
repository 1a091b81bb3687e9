// Types of bin/node-flags.js (plain JavaScript, like bin/aot.js), for the TypeScript that imports it (bench/, test/).
/** The node flags of the server's long-running roles (npm start, crm serve, crm worker). */
export const SERVER_NODE_FLAGS: readonly string[];
/** The server's flags that neither `execArgv` nor `nodeOptions` (default: this process's) set. */
export function missingServerFlags(execArgv?: readonly string[], nodeOptions?: string): string[];
/** Runs this script again in this process's place with the flags it lacks; returns when none is missing. */
export function withServerFlags(): void;
