// Counts the statements a Kysely handle runs: add `counter.plugin` with `db.withPlugin(...)` and read `count`.
// Counted when a result comes back, so a statement compiled once and executed many times counts each time.
import type { KyselyPlugin } from 'kysely';

export function statementCounter() {
  const state = { count: 0 };
  const plugin: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      state.count++;
      return args.result;
    },
  };
  return {
    plugin,
    get count() {
      return state.count;
    },
  };
}
