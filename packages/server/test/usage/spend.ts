import type {
  AccountStatement,
  AccountUsage,
  RequestList,
  RequestSummary,
  StatementMovement,
} from '@tollgate/protocol';
import { expect } from 'vitest';
import type { Outcome } from '../../src/requests/request-service.js';
import { ADMIN_TOKEN, type TestGateway } from '../helpers/gateway.js';

/** Helpers of the spend tests (listing, usage, statements): reads that must answer 200. */

export const DAY_MS = 86_400_000;

/** A confirmed, priced outcome of `amount` micro-yuan (no upstream involved). */
export function succeeded(amount: number): Outcome {
  return {
    kind: 'succeeded',
    body: { object: 'list', data: [] },
    usage: { prompt_tokens: 1, total_tokens: 1 },
    amount,
    pricingRule: `test: ${amount} micro-yuan`,
    upstreamRequestId: null,
  };
}

export async function listRequests(
  gateway: TestGateway,
  key: string,
  query = '',
): Promise<RequestList> {
  const response = await gateway.call('GET', `/v1/requests${query === '' ? '' : `?${query}`}`, {
    key,
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<RequestList>();
}

/** Every page of a list, following `next_cursor` with the same `query`. */
export async function listAllPages(
  gateway: TestGateway,
  key: string,
  query: string,
): Promise<{ records: RequestSummary[]; pages: RequestList[] }> {
  const pages: RequestList[] = [];
  let cursor: string | null = null;
  do {
    const parameters: string = [query, cursor === null ? '' : `cursor=${cursor}`]
      .filter((part) => part !== '')
      .join('&');
    const page = await listRequests(gateway, key, parameters);
    pages.push(page);
    cursor = page.next_cursor;
    if (pages.length > 100) throw new Error('the cursor never ends');
  } while (cursor !== null);
  return { records: pages.flatMap((page) => page.data), pages };
}

export async function usageOf(
  gateway: TestGateway,
  key: string,
  query = '',
): Promise<AccountUsage> {
  const response = await gateway.call(
    'GET',
    `/v1/account/usage${query === '' ? '' : `?${query}`}`,
    { key },
  );
  expect(response.statusCode, response.body).toBe(200);
  return response.json<AccountUsage>();
}

/** The admin statement as text (JSON or CSV), with its response headers. */
export async function statementText(
  gateway: TestGateway,
  accountId: string,
  query: string,
  headers: Record<string, string> = {},
): Promise<{ body: string; contentType: string; disposition: string | undefined }> {
  const response = await gateway.app.inject({
    method: 'GET',
    url: `/admin/v1/accounts/${accountId}/statement${query === '' ? '' : `?${query}`}`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers },
  });
  expect(response.statusCode, response.body).toBe(200);
  const disposition = response.headers['content-disposition'];
  return {
    body: response.body,
    contentType: String(response.headers['content-type']),
    disposition: typeof disposition === 'string' ? disposition : undefined,
  };
}

export async function statementOf(
  gateway: TestGateway,
  accountId: string,
  query: string,
): Promise<AccountStatement> {
  return JSON.parse((await statementText(gateway, accountId, query)).body) as AccountStatement;
}

// Every key of the wire types, once: a key added to or missing from a type does not compile.
const STATEMENT_KEYS: Record<keyof AccountStatement, true> = {
  object: true,
  account_id: true,
  email: true,
  currency: true,
  from: true,
  to: true,
  period_start: true,
  period_end: true,
  complete: true,
  opening_balance: true,
  movements: true,
  totals: true,
  closing_balance: true,
};
const MOVEMENT_KEYS: Record<keyof StatementMovement, true> = {
  id: true,
  time: true,
  kind: true,
  amount: true,
  balance: true,
  description: true,
  reference: true,
  request_id: true,
  task_id: true,
  model: true,
  price_version: true,
};

/**
 * The invariants every statement keeps: exactly the keys of its wire type; each movement's
 * balance is the one before plus its amount, the totals add up, and `opening + Σ amounts =
 * closing`.
 */
export function expectStatementReconciles(statement: AccountStatement): void {
  expect(Object.keys(statement).sort()).toEqual(Object.keys(STATEMENT_KEYS).sort());
  for (const movement of statement.movements)
    expect(Object.keys(movement).sort()).toEqual(Object.keys(MOVEMENT_KEYS).sort());
  let balance = statement.opening_balance;
  let credits = 0;
  let debits = 0;
  for (const movement of statement.movements) {
    balance += movement.amount;
    expect(movement.balance, `running balance after ${movement.id}`).toBe(balance);
    if (movement.amount > 0) credits += movement.amount;
    else debits -= movement.amount;
    expect(movement.kind === 'capture' ? movement.amount <= 0 : movement.amount > 0).toBe(true);
  }
  expect(statement.closing_balance).toBe(balance);
  expect(statement.totals).toEqual({
    movements: statement.movements.length,
    credits,
    debits,
  });
  expect(statement.closing_balance).toBe(statement.opening_balance + credits - debits);
}

/** RFC 4180, as a spreadsheet reads it: quoted fields, doubled quotes, CRLF records. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index];
    if (quoted) {
      if (character === '"' && text[index + 1] === '"') {
        field += '"';
        index += 1;
      } else if (character === '"') quoted = false;
      else field += character;
    } else if (character === '"') quoted = true;
    else if (character === ',') {
      record.push(field);
      field = '';
    } else if (character === '\r' && text[index + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      index += 1;
    } else field += character;
  }
  if (field !== '' || record.length > 0) throw new Error('the CSV does not end with CRLF');
  return records;
}
