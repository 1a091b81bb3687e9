// Cursor pagination (contract, Pagination): pass `next_cursor` as `cursor` until it is null.

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** Every item of every page, fetching the next page only when the previous one is used up. */
export async function* walk<T, Q extends { cursor?: string | undefined }>(
  fetchPage: (query: Q) => Promise<Page<T>>,
  query: Q,
): AsyncGenerator<T, void, undefined> {
  let cursor = query.cursor;
  for (;;) {
    const page = await fetchPage({ ...query, cursor });
    yield* page.items;
    if (!page.next_cursor) return;
    cursor = page.next_cursor;
  }
}
