import type { Wallet, WalletMovementList } from '@tollgate/protocol';
import { queryText, request, requestFile } from './api.js';

/**
 * The member's wallet calls (docs/console.md, "Wallet"): the account's money with its open
 * holds, a period's journal entries page by page, and the same period as CSV.
 */

/** UTC days `YYYY-MM-DD`, both included; an empty one leaves the server's default (this month). */
export interface WalletPeriod {
  from: string;
  to: string;
}

/** Entries of one page (the server takes 1–100). */
export const MOVEMENTS_PAGE = 50;

function periodQuery(period: WalletPeriod): URLSearchParams {
  const query = new URLSearchParams();
  if (period.from !== '') query.set('from', period.from);
  if (period.to !== '') query.set('to', period.to);
  return query;
}

function csvPath(period: WalletPeriod): string {
  return `/wallet/statement.csv${queryText(periodQuery(period))}`;
}

export const walletApi = {
  wallet: () => request<Wallet>('GET', '/wallet'),
  movements: (period: WalletPeriod, cursor: string | null) => {
    const query = periodQuery(period);
    query.set('limit', String(MOVEMENTS_PAGE));
    return request<WalletMovementList>('GET', `/wallet/movements${queryText(query, cursor)}`);
  },
  /** The CSV's own address (a link's `href`; `statementFile` downloads it). */
  statementUrl: (period: WalletPeriod) => `/console/api${csvPath(period)}`,
  statementFile: (period: WalletPeriod) => requestFile('GET', csvPath(period), 'text/csv'),
};
