// Counts the statements a Kysely handle runs: add `counter.plugin` with `db.withPlugin(...)` and read `count`.
// Counted when a result comes back, so a statement compiled once and executed many times counts each time.
// The key's last-use write (decisions §18) is not counted: it runs off the request, at most once a minute per key,
// so a read that happens to cross a minute would otherwise count one statement more than it makes.
import { type KyselyPlugin, type QueryId, type RootOperationNode, TableNode, UpdateQueryNode } from 'kysely';

function isKeyUsageWrite(node: RootOperationNode) {
  if (!UpdateQueryNode.is(node) || !node.table || !TableNode.is(node.table)) return false;
  return node.table.table.identifier.name === 'api_keys';
}

export function statementCounter() {
  const state = { count: 0 };
  const skipped = new WeakSet<QueryId>();
  const plugin: KyselyPlugin = {
    transformQuery: (args) => {
      if (isKeyUsageWrite(args.node)) skipped.add(args.queryId);
      return args.node;
    },
    transformResult: async (args) => {
      if (!skipped.has(args.queryId)) state.count++;
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
