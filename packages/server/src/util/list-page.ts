/** One page of a newest-first listing, in the list shape of docs/api-conventions.md. */
export interface ListPage<View> {
  readonly object: 'list';
  readonly data: View[];
  readonly has_more: boolean;
  /** The last item's id, to pass as `after` for the next page; null on the last page. */
  readonly next_cursor: string | null;
}

/**
 * The page of a listing whose query read one row more than `limit`: that extra row only tells
 * whether there are more, and is not shown.
 */
export function listPage<Row extends { readonly id: string }, View>(
  rows: readonly Row[],
  limit: number,
  view: (row: Row) => View,
): ListPage<View> {
  const page = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return {
    object: 'list',
    data: page.map((row) => view(row)),
    has_more: hasMore,
    next_cursor: hasMore ? (page.at(-1)?.id ?? null) : null,
  };
}
