import {
  isErrorCode,
  type Account,
  type ApiKey,
  type ApiKeyList,
  type ConsoleInvitationAcceptBody,
  type ConsoleInvitationState,
  type ConsoleSessionState,
  type ConsoleSignInBody,
  type ConsoleUser,
  type ErrorCode,
  type OwnerRequestList,
  type RedemptionBody,
} from '@tollgate/protocol';

/**
 * The console API (`/console/api`, docs/console.md): JSON, the session cookie sent by the
 * browser, and the session's CSRF token on every state-changing call. Every call of every page,
 * the operator's included, goes through `request` (JSON), `requestFile` (a CSV or JSON download)
 * or `upload` (a file with progress) below, which share one reading of the answer (`readJson`,
 * `readFile`): the status first, then the `Content-Type`, and only then the body.
 */

/** Failures the console names itself: the gateway was not reached, or answered something else. */
export type ClientFailureCode = 'NETWORK' | 'UNEXPECTED_ANSWER' | 'UNKNOWN';

/**
 * A failed call: the gateway's error (its `code`, `message` and `param`, docs/api-conventions.md),
 * or one the console names (`ClientFailureCode`). `status` is the HTTP status (0: no answer).
 */
export class ApiFailure extends Error {
  override readonly name: string = 'ApiFailure';
  constructor(
    readonly status: number,
    readonly code: ErrorCode | ClientFailureCode,
    message: string,
    /** The field the error names (`totp`: the sign-in needs the second factor's code). */
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

/**
 * An answer that is not what was asked for: not JSON (a proxy's HTML 502, an empty body, a
 * truncated document), or a download of another type. Shown like any other error (ErrorLine).
 */
export class UnexpectedAnswer extends ApiFailure {
  override readonly name: string = 'UnexpectedAnswer';
  /** The answer's `Content-Type`; `null` when it had none. */
  readonly contentType: string | null;
  constructor(raw: RawAnswer, expected: string) {
    const what = raw.body === '' ? 'empty' : (raw.contentType ?? 'without a Content-Type');
    super(
      raw.status,
      'UNEXPECTED_ANSWER',
      `HTTP ${raw.status}${raw.statusText === '' ? '' : ` ${raw.statusText}`}: the answer is ${what}, not ${expected}`,
    );
    this.contentType = raw.contentType;
  }
}

/** What came back, before anything is parsed (from `fetch`, or an upload's XMLHttpRequest). */
export interface RawAnswer {
  status: number;
  statusText: string;
  contentType: string | null;
  body: string;
}

/** A downloaded file: its text, its media type, and the name the gateway gave it. */
export interface DownloadedFile {
  text: string;
  mediaType: string;
  /** From `Content-Disposition`; `null` when the gateway named none. */
  fileName: string | null;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RequestOptions {
  /** Sent as JSON: the route's body type of `@tollgate/protocol` (each call says which). */
  body?: unknown;
  /** More headers, e.g. a settle's `Idempotency-Key`. */
  headers?: Record<string, string>;
}

const BASE = '/console/api';
const JSON_TYPE = 'application/json';

let csrfToken: string | null = null;

/** Remembers the CSRF token of the current session (from sign-in or `GET /session`). */
export function rememberSession(state: ConsoleSessionState | null): void {
  csrfToken = state?.csrf_token ?? null;
}

function mediaTypeOf(contentType: string | null): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The failure an answer outside 2xx stands for: the gateway's error body, when it is one. */
function failureOf(raw: RawAnswer): ApiFailure {
  const body = mediaTypeOf(raw.contentType) === JSON_TYPE ? parsed(raw.body) : undefined;
  const error = isRecord(body) && isRecord(body['error']) ? body['error'] : {};
  const { code, message, param } = error;
  if (typeof message !== 'string') return new UnexpectedAnswer(raw, 'an error in JSON');
  return new ApiFailure(
    raw.status,
    isErrorCode(code) ? code : 'UNKNOWN',
    message,
    typeof param === 'string' ? param : null,
  );
}

/**
 * A JSON answer's value: 204 is `undefined`; any other 2xx must say `application/json` and parse;
 * anything else is the `ApiFailure` it stands for. The caller gives the value its type.
 */
export function readJson(raw: RawAnswer): unknown {
  if (raw.status < 200 || raw.status > 299) throw failureOf(raw);
  if (raw.status === 204) return undefined;
  if (mediaTypeOf(raw.contentType) !== JSON_TYPE) throw new UnexpectedAnswer(raw, 'JSON');
  const value = parsed(raw.body);
  if (value === undefined) throw new UnexpectedAnswer(raw, 'well-formed JSON');
  return value;
}

/** A download's file: a 2xx of `mediaType` (with the name the gateway gave it), or a failure. */
export function readFile(
  raw: RawAnswer,
  mediaType: string,
  disposition: string | null,
): DownloadedFile {
  if (raw.status < 200 || raw.status > 299) throw failureOf(raw);
  if (mediaTypeOf(raw.contentType) !== mediaType) throw new UnexpectedAnswer(raw, mediaType);
  const fileName = /filename="([^"]+)"/.exec(disposition ?? '')?.[1] ?? null;
  return { text: raw.body, mediaType, fileName };
}

/** The headers of every call: what it accepts, its body's type, the CSRF token when it changes. */
function headersFor(
  method: Method,
  accept: string,
  options: RequestOptions,
): Record<string, string> {
  const headers: Record<string, string> = { accept, ...options.headers };
  if (options.body !== undefined) headers['content-type'] = JSON_TYPE;
  if (method !== 'GET' && csrfToken !== null) headers['x-csrf-token'] = csrfToken;
  return headers;
}

async function send(
  method: Method,
  path: string,
  accept: string,
  options: RequestOptions,
): Promise<{ raw: RawAnswer; headers: Headers }> {
  try {
    const response = await fetch(`${BASE}${path}`, {
      method,
      headers: headersFor(method, accept, options),
      credentials: 'same-origin',
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
    const raw = {
      status: response.status,
      statusText: response.statusText,
      contentType: response.headers.get('content-type'),
      body: await response.text(),
    };
    return { raw, headers: response.headers };
  } catch (error) {
    throw new ApiFailure(0, 'NETWORK', error instanceof Error ? error.message : String(error));
  }
}

/**
 * A JSON answer as `Answer`, the wire type of its route (from `@tollgate/protocol`). The one place an answer gets its type: the gateway is trusted to answer its
 * routes' types (its own suites hold it to them), so the value `readJson` checked to be JSON is
 * taken as `Answer` here, not checked field by field.
 */
function answerOf<Answer>(raw: RawAnswer): Answer {
  return readJson(raw) as Answer;
}

/** One console API call answering JSON (or 204), as the route's wire type `Answer`. */
export async function request<Answer>(
  method: Method,
  path: string,
  options: RequestOptions = {},
): Promise<Answer> {
  const { raw } = await send(method, path, JSON_TYPE, options);
  return answerOf<Answer>(raw);
}

/** A download (a CSV export, a statement): the file, checked to be of `mediaType`. */
export async function requestFile(
  method: Method,
  path: string,
  mediaType: 'text/csv' | 'application/json',
  options: RequestOptions = {},
): Promise<DownloadedFile> {
  const { raw, headers } = await send(method, path, mediaType, options);
  return readFile(raw, mediaType, headers.get('content-disposition'));
}

/**
 * Uploads a file as the body (its type the `Content-Type`) with progress, which `fetch` does not
 * report while sending: XMLHttpRequest, read as `request` reads its answers.
 */
export function upload<Answer>(
  path: string,
  file: File,
  headers: Record<string, string>,
  onProgress: (fraction: number) => void,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `${BASE}${path}`);
    const all = headersFor('POST', JSON_TYPE, { headers });
    all['content-type'] = file.type === '' ? 'application/octet-stream' : file.type;
    for (const [name, value] of Object.entries(all)) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    xhr.onload = () => {
      try {
        resolve(
          answerOf<Answer>({
            status: xhr.status,
            statusText: xhr.statusText,
            contentType: xhr.getResponseHeader('content-type'),
            body: xhr.responseText,
          }),
        );
      } catch (failure) {
        reject(failure instanceof Error ? failure : new Error(String(failure)));
      }
    };
    xhr.onerror = () =>
      reject(new ApiFailure(0, 'NETWORK', 'the upload did not reach the gateway'));
    xhr.send(file);
  });
}

/** Session, invitation, and the caller's account, keys, redemptions and requests. */
export const api = {
  session: () => request<ConsoleSessionState>('GET', '/session'),
  signIn: (email: string, password: string, totp?: string) =>
    request<ConsoleSessionState>('POST', '/session', {
      body: {
        email,
        password,
        ...(totp === undefined ? {} : { totp }),
      } satisfies ConsoleSignInBody,
    }),
  signOut: () => request<undefined>('DELETE', '/session'),
  invitation: (token: string) =>
    request<ConsoleInvitationState>('GET', `/invitations/${encodeURIComponent(token)}`),
  acceptInvitation: (token: string, password: string) =>
    request<ConsoleUser>('POST', `/invitations/${encodeURIComponent(token)}`, {
      body: { password } satisfies ConsoleInvitationAcceptBody,
    }),
  account: () => request<Account>('GET', '/account'),
  keys: () => request<ApiKeyList>('GET', '/keys'),
  disableKey: (id: string) => request<ApiKey>('POST', `/keys/${encodeURIComponent(id)}/disable`),
  redeem: (code: string) =>
    request<Account>('POST', '/redemptions', { body: { code } satisfies RedemptionBody }),
  /** `query`: the list's filters and search as a query string (RequestsPage's `requestQuery`). */
  requests: (query: URLSearchParams, cursor: string | null) =>
    request<OwnerRequestList>('GET', `/requests${queryText(query, cursor)}`),
};

/** `?…` of a query and a page's cursor; empty when there is neither. */
export function queryText(query: URLSearchParams, cursor: string | null = null): string {
  const page = new URLSearchParams(query);
  if (cursor !== null) page.set('cursor', cursor);
  const text = page.toString();
  return text === '' ? '' : `?${text}`;
}
