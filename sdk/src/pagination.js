// Cursor pagination (contract, Pagination): pass `next_cursor` as `cursor` until it is null.
/** Every item of every page, fetching the next page only when the previous one is used up. */
export async function* walk(fetchPage, query) {
    let cursor = query.cursor;
    for (;;) {
        const page = await fetchPage({ ...query, cursor });
        yield* page.items;
        if (!page.next_cursor)
            return;
        cursor = page.next_cursor;
    }
}
