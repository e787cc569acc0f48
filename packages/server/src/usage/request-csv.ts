import { csvRecord, inertText } from './csv.js';
import { decodeCursor, type RequestListFilter } from './request-list-query.js';
import type { OwnerSearch, RequestListing } from './request-listing.js';

/** The most records one export holds; a narrower filter (dates) exports the rest. */
export const MAX_CSV_RECORDS = 10_000;

const HEADER = [
  'created_at',
  'request_id',
  'key_id',
  'idempotency_key',
  'method',
  'path',
  'model',
  'status',
  'http_status',
  'bill_amount_micro_yuan',
  'price_version',
  'pricing_rule',
] as const;

/**
 * The account's records as CSV (docs/console.md, "Requests"), newest first, with the list's
 * filters: the same RFC 4180 writing as the statements (usage/csv.ts: CRLF, quoting, text that
 * could be a spreadsheet formula made inert), read page by page through `listForAccount`, so
 * the rows are exactly what the list shows. Amounts are integer micro-yuan. Stops after
 * `MAX_CSV_RECORDS`, with a last line saying so.
 */
export async function* accountRequestsCsv(
  listing: RequestListing,
  accountId: string,
  filter: RequestListFilter,
  search: OwnerSearch,
): AsyncGenerator<string> {
  yield csvRecord(HEADER);
  let cursor = filter.cursor;
  let written = 0;
  for (;;) {
    const page = await listing.listForAccount(accountId, { ...filter, limit: 100, cursor }, search);
    for (const row of page.data) {
      if (written === MAX_CSV_RECORDS) {
        yield csvRecord([`# truncated after ${MAX_CSV_RECORDS} records: narrow the dates`]);
        return;
      }
      written += 1;
      yield csvRecord([
        row.created_at,
        row.id,
        row.key_id,
        row.idempotency_key,
        row.method,
        inertText(row.path),
        inertText(row.model),
        row.status,
        row.http_status,
        row.bill?.amount ?? null,
        inertText(row.bill?.price_version ?? null),
        inertText(row.bill?.pricing_rule ?? null),
      ]);
    }
    if (!page.has_more || page.next_cursor === null) return;
    cursor = decodeCursor(page.next_cursor);
  }
}
