import { useState, type Dispatch, type FormEvent, type SetStateAction } from 'react';
import { useLoad, type Load } from './useLoad.js';

/** A page of a listing read a page at a time (`has_more`, and the cursor of the next page). */
export interface ListedPage<Row> {
  data: Row[];
  has_more: boolean;
  next_cursor: string | null;
}

/** A filtered listing as a page shows it: the form's draft, the pages read, and how to read on. */
export interface PagedList<Draft, Filters, Page extends ListedPage<unknown>> {
  /** What the filter form holds, applied on `submit`. */
  draft: Draft;
  setDraft: Dispatch<SetStateAction<Draft>>;
  /** The filters the pages shown were read with. */
  applied: Filters;
  /** The form's submit: the first page of the draft's filters, the error shown cleared. */
  submit: (event: FormEvent) => void;
  /** Back to the first draft and its first page. */
  reset: () => void;
  /** The first page (what it says of the whole listing: its period, its totals) and its error. */
  first: Load<Page>;
  /** The rows of every page read, in order; `null` while the first page loads. */
  rows: Page['data'] | null;
  /** The next page's cursor; `null` once the last page is shown. */
  cursor: string | null;
  /** Reads the page at `cursor` and appends it; a failure shows as `first.error`. */
  loadMore: (cursor: string) => void;
}

/**
 * The console's one way to show a filtered listing with "load more" (the wallet's movements, the
 * operator's request log), beside `useLoad`: the form's draft becomes the applied filters on
 * submit (`filtersOf`), the first page of the applied filters is read with `useLoad`, and each
 * "load more" appends the next page to that first page. The pages appended belong to the first
 * page they followed: a new first page (other filters, a reload) drops them, and a page that
 * arrives after its first page was replaced is dropped too. `read` gets the first page when it
 * reads a later one (`null` for the first), so a listing can hold what the first page fixed (a
 * default period that must not move while paging).
 */
export function usePagedList<Draft, Filters, Page extends ListedPage<unknown>>({
  initial,
  filtersOf,
  read,
  onError,
}: {
  initial: Draft;
  filtersOf: (draft: Draft) => Filters;
  read: (filters: Filters, cursor: string | null, first: Page | null) => Promise<Page>;
  onError: (error: unknown) => void;
}): PagedList<Draft, Filters, Page> {
  const [draft, setDraft] = useState<Draft>(initial);
  const [applied, setApplied] = useState<Filters>(() => filtersOf(initial));
  const first = useLoad(() => read(applied, null, null), onError, [applied]);
  const [more, setMore] = useState<{ after: Page; pages: Page[] } | null>(null);
  const pages =
    first.value === null ? null : [first.value, ...(more?.after === first.value ? more.pages : [])];
  const rows = (pages?.flatMap((page) => page.data) ?? null) as Page['data'] | null;
  const last = pages?.at(-1);
  const cursor = last?.has_more === true ? last.next_cursor : null;
  const loadMore = (from: string) => {
    const after = first.value;
    if (after === null) return;
    first.setError(null);
    read(applied, from, after)
      .then((page) =>
        setMore((before) => ({
          after,
          pages: [...(before?.after === after ? before.pages : []), page],
        })),
      )
      .catch(first.fail);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    first.setError(null);
    setApplied(filtersOf(draft));
  };
  const reset = () => {
    setDraft(initial);
    setApplied(filtersOf(initial));
  };
  return { draft, setDraft, applied, submit, reset, first, rows, cursor, loadMore };
}
