/**
 * The console API (`/console/api`, docs/console.md): JSON, the session cookie sent by the
 * browser, and the session's CSRF token on every state-changing call.
 */

export interface ConsoleUser {
  id: string;
  email: string;
  role: 'member' | 'operator';
  account_id: string | null;
}

export interface SessionState {
  user: ConsoleUser;
  csrf_token: string;
}

export type BudgetWindow = 'daily' | 'weekly' | 'monthly' | 'total';

/** A spend limit as the server shows it (docs/billing.md "Budgets"), micro-yuan. */
export interface Budget {
  limit: number;
  window: BudgetWindow;
  spent: number;
  held: number;
  remaining: number;
  resets_at: string | null;
}

export interface Account {
  id: string;
  email: string;
  balance: number;
  held: number;
  available: number;
  /** Refunded micro-yuan not yet taken back (absent from older servers). */
  owed?: number;
  /** The account's budget, `null` without one (absent from older servers). */
  budget?: Budget | null;
}

export interface ApiKey {
  id: string;
  kind: 'personal' | 'service';
  name: string | null;
  hint: string;
  disabled_at: string | null;
  last_used_at: string | null;
  created_at: string;
  /** The allowlist (`null`: every model), the expiry and the rotation's successor. */
  models?: string[] | null;
  expires_at?: string | null;
  replaced_by?: string | null;
}

export interface RequestSummary {
  id: string;
  key_id: string;
  idempotency_key: string;
  method: string;
  path: string;
  model: string | null;
  status: string;
  http_status: number | null;
  usage: Record<string, number> | null;
  bill: { amount: number; price_version: string | null; pricing_rule: string | null } | null;
  created_at: string;
}

export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** An error answer of the API: its code (`UNAUTHENTICATED`, `RATE_LIMITED`, ...) and message. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The field the error names (`totp`: the sign-in needs the second factor's code). */
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

let csrfToken: string | null = null;

/** Remembers the CSRF token of the current session (from sign-in or `GET /session`). */
export function rememberSession(state: SessionState | null): void {
  csrfToken = state?.csrf_token ?? null;
}

/** The CSRF header of the current session, for a call that is not JSON (a CSV download). */
export function csrfHeaders(): Record<string, string> {
  return csrfToken === null ? {} : { 'x-csrf-token': csrfToken };
}

/** One console API call; `extraHeaders` carries e.g. a settle's `Idempotency-Key`. */
export async function call<T>(
  method: string,
  path: string,
  body?: unknown,
  extraHeaders: Record<string, string> = {},
): Promise<T> {
  const headers: Record<string, string> = { ...extraHeaders };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken !== null) headers['x-csrf-token'] = csrfToken;
  const response = await fetch(`/console/api${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (response.status === 204) return undefined as T;
  const answer = (await response.json()) as unknown;
  if (!response.ok) {
    const error = (answer as { error?: { code?: string; message?: string; param?: string } }).error;
    throw new ApiFailure(
      response.status,
      error?.code ?? 'UNKNOWN',
      error?.message ?? '',
      error?.param ?? null,
    );
  }
  return answer as T;
}

export const api = {
  session: () => call<SessionState>('GET', '/session'),
  signIn: (email: string, password: string, totp?: string) =>
    call<SessionState>('POST', '/session', {
      email,
      password,
      ...(totp === undefined ? {} : { totp }),
    }),
  signOut: () => call<undefined>('DELETE', '/session'),
  invitation: (token: string) =>
    call<{ email: string; expires_at: string }>('GET', `/invitations/${encodeURIComponent(token)}`),
  acceptInvitation: (token: string, password: string) =>
    call<ConsoleUser>('POST', `/invitations/${encodeURIComponent(token)}`, { password }),
  account: () => call<Account>('GET', '/account'),
  keys: () => call<Page<ApiKey>>('GET', '/keys'),
  createKey: (name: string) => call<ApiKey & { key: string }>('POST', '/keys', { name }),
  disableKey: (id: string) => call<ApiKey>('POST', `/keys/${encodeURIComponent(id)}/disable`),
  redeem: (code: string) => call<Account>('POST', '/redemptions', { code }),
  /** `query`: the list's filters and search as a query string (`requestQuery`). */
  requests: (query: URLSearchParams, cursor: string | null) => {
    const page = new URLSearchParams(query);
    if (cursor !== null) page.set('cursor', cursor);
    const text = page.toString();
    return call<Page<RequestSummary>>('GET', `/requests${text === '' ? '' : `?${text}`}`);
  },
};
