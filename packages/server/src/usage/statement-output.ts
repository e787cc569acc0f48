import { csvRecord, inertText, type CsvCell } from './csv.js';
import { statementMovementOf, type PreparedStatement, type StatementEvent } from './statement.js';

export type StatementFormat = 'json' | 'csv';

/** `?format=` wins; else `Accept: text/csv` asks for CSV; else JSON. */
export function statementFormat(
  format: StatementFormat | undefined,
  accept: string | undefined,
): StatementFormat {
  if (format !== undefined) return format;
  return accept !== undefined && /(^|,)\s*text\/csv\s*(;|,|$)/i.test(accept) ? 'csv' : 'json';
}

export const STATEMENT_CONTENT_TYPES: Readonly<Record<StatementFormat, string>> = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
};

/**
 * `statement-<account>-<from>-<to>.<format>` (a wallet's: `wallet-…`): every part is ours (an
 * id, two days).
 */
export function statementFileName(statement: PreparedStatement, format: StatementFormat): string {
  const { account_id: account, from, to } = statement.header;
  return `${statement.scope}-${account}-${from}-${to}.${format}`;
}

/** The statement as text chunks of about `CHUNK_CHARS`, written as it is read. */
export function renderStatement(
  statement: PreparedStatement,
  format: StatementFormat,
): AsyncGenerator<string> {
  return chunked(format === 'csv' ? csvLines(statement) : jsonParts(statement));
}

/**
 * The JSON of `AccountStatement`, built piece by piece: the header, each movement, then the
 * totals and the closing balance (which are known only at the end). A read that fails part-way
 * leaves the document unterminated, never a well-formed statement with movements missing.
 */
async function* jsonParts(statement: PreparedStatement): AsyncGenerator<string> {
  const header = JSON.stringify(statement.header);
  yield `${header.slice(0, -1)},"movements":[`;
  let separator = '';
  for await (const event of statement.events()) {
    if (event.kind === 'movement') {
      yield `${separator}${JSON.stringify(statementMovementOf(event.movement))}`;
      separator = ',';
    } else {
      yield `],"totals":${JSON.stringify(event.totals)},"closing_balance":${event.closingBalance}}\n`;
    }
  }
}

export const CSV_HEADER = [
  'time',
  'kind',
  'amount',
  'balance',
  'description',
  'reference',
  'request_id',
  'task_id',
  'model',
  'price_version',
  'journal_id',
] as const;

/**
 * A wallet's export (docs/console.md, "Wallet") adds these columns after the statement's: what
 * the entry did to `held`, the held amount after it, and the key of its request or task.
 */
export const WALLET_CSV_COLUMNS = ['held_change', 'held', 'key_name', 'key_hint'] as const;

/** The columns after `description` that the opening and closing records leave empty. */
const NO_DETAILS = [null, null, null, null, null, null] as const;

/**
 * CSV (RFC 4180, header row): an `opening` record at `period_start` with the opening balance,
 * one record per movement, and a `closing` record at `period_end` with the closing balance (its
 * absence marks a truncated file). Amounts are signed integers of micro-yuan; the opening and
 * closing records leave `amount` empty (and, in a wallet's, `held_change`, their `held` being
 * the held amount then).
 */
async function* csvLines(statement: PreparedStatement): AsyncGenerator<string> {
  const { header } = statement;
  const wallet = statement.scope === 'wallet';
  yield csvRecord(wallet ? [...CSV_HEADER, ...WALLET_CSV_COLUMNS] : CSV_HEADER);
  yield csvRecord([
    header.period_start,
    'opening',
    null,
    header.opening_balance,
    'opening balance',
    ...NO_DETAILS,
    ...(wallet ? [null, statement.openingHeld, null, null] : []),
  ]);
  for await (const event of statement.events()) yield csvLine(event, header.period_end, wallet);
}

function csvLine(event: StatementEvent, periodEnd: string, wallet: boolean): string {
  if (event.kind === 'end')
    return csvRecord([
      periodEnd,
      'closing',
      null,
      event.closingBalance,
      'closing balance',
      ...NO_DETAILS,
      ...(wallet ? [null, event.closingHeld, null, null] : []),
    ]);
  const movement = event.movement;
  const walletCells: CsvCell[] = wallet
    ? [
        movement.held_change,
        movement.held,
        inertText(movement.key?.name ?? null),
        movement.key?.hint ?? null,
      ]
    : [];
  return csvRecord([
    movement.time,
    movement.kind,
    movement.amount,
    movement.balance,
    inertText(movement.description),
    inertText(movement.reference),
    movement.request_id,
    movement.task_id,
    movement.model,
    movement.price_version,
    movement.id,
    ...walletCells,
  ]);
}

const CHUNK_CHARS = 64 * 1024;

/** Joins small pieces into chunks of about CHUNK_CHARS: one write per movement would be slow. */
async function* chunked(parts: AsyncIterable<string>): AsyncGenerator<string> {
  let buffer = '';
  for await (const part of parts) {
    buffer += part;
    if (buffer.length >= CHUNK_CHARS) {
      yield buffer;
      buffer = '';
    }
  }
  if (buffer !== '') yield buffer;
}
