// Work claimed one organization at a time (D318): a worker first finds the organizations with due work (a read
// without locks, oldest due first), then claims within each, by a statement that names it (on Citus, one shard:
// `FOR UPDATE SKIP LOCKED` runs only there). Each organization gets an even share of the batch, so one with a long
// queue does not hold the others back; what a share leaves unused passes to the next ones.

/** Claims up to `limit` items over `orgs` (in their order), an even share each. */
export async function claimFairly<T>(
  orgs: readonly string[],
  limit: number,
  claim: (orgId: string, max: number) => Promise<T[]>,
): Promise<T[]> {
  const claimed: T[] = [];
  for (let index = 0; index < orgs.length && claimed.length < limit; index++) {
    const left = orgs.length - index;
    const share = Math.max(1, Math.ceil((limit - claimed.length) / left));
    claimed.push(...(await claim(orgs[index] as string, share)));
  }
  return claimed;
}
