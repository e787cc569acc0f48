import type {
  ApiKeyList,
  OperatorDashboard,
  OperatorModelList,
  OperatorRequestLog,
  RedemptionBatchList,
  RedemptionBatchVoided,
} from '@tollgate/protocol';
import { queryText, request } from '../api.js';

/**
 * The calls of the operator's dashboard, request log and code batches (docs/console.md,
 * "Dashboard", "Request log", "Redemption codes"), through the console's one request function.
 */

const admin = '/admin';
const id = encodeURIComponent;

/** The request log's filters, as the query sends them (empty: not filtered). */
export interface RequestLogFilters {
  account_id: string;
  key_id: string;
  model: string;
  status: string;
  /** ISO 8601 instants: `from` included, `to` excluded; empty: the server's default. */
  from: string;
  to: string;
}

export function requestLogQuery(filters: RequestLogFilters): URLSearchParams {
  const query = new URLSearchParams();
  for (const name of Object.keys(filters) as (keyof RequestLogFilters)[])
    if (filters[name] !== '') query.set(name, filters[name]);
  return query;
}

export const dashboardApi = {
  /** `from`/`to`: UTC days `YYYY-MM-DD`, both included. */
  dashboard: (from: string, to: string) =>
    request<OperatorDashboard>(
      'GET',
      `${admin}/dashboard${queryText(new URLSearchParams({ from, to }))}`,
    ),
  requests: (filters: RequestLogFilters, cursor: string | null) =>
    request<OperatorRequestLog>(
      'GET',
      `${admin}/requests${queryText(requestLogQuery(filters), cursor)}`,
    ),
  keys: (accountId: string) =>
    request<ApiKeyList>('GET', `${admin}/accounts/${id(accountId)}/keys`),
  models: () => request<OperatorModelList>('GET', `${admin}/models`),
  codeBatches: (after: string | null) =>
    request<RedemptionBatchList>(
      'GET',
      `${admin}/code-batches${after === null ? '' : `?after=${id(after)}`}`,
    ),
  voidBatch: (batchId: string) =>
    request<RedemptionBatchVoided>('POST', `${admin}/code-batches/${id(batchId)}/void`),
};
