// `npm start`: the API and the worker in one process.
import { ConfigError, loadConfig } from './config.ts';
import { DataDirLockedError } from './db/data-dir-lock.ts';
import { PortUnavailableError, run } from './server.ts';

try {
  await run(loadConfig(), { http: true, worker: true });
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`Configuration error: ${error.message}\n`);
    process.exit(2);
  }
  if (error instanceof DataDirLockedError || error instanceof PortUnavailableError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  throw error;
}
