/** Groups items by a key, keeping the items' order inside each group and the keys' order of first appearance. */
export function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const name = key(item);
    const group = groups.get(name);
    if (group) group.push(item);
    else groups.set(name, [item]);
  }
  return groups;
}

/** groupBy with the groups in key order: locks taken group by group then come in one order, so that two workers
 * can never wait on each other in a cycle. */
export function groupByInKeyOrder<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  return new Map([...groupBy(items, key).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
