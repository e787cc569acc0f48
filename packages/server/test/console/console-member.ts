import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { TestGateway } from '../helpers/gateway.js';

export const MEMBER_PASSWORD = 'correct horse battery';

/** A signed-in console session: its cookie pair and CSRF token. */
export interface Signed {
  cookie: string;
  csrf: string;
}

/** An account with `balance`, one key, and a member of it signed in to the console. */
export async function signedInMember(gateway: TestGateway, balance = 0) {
  const account = await gateway.account(balance);
  const email = `member-${account.accountId}@example.test`.toLowerCase();
  const invitation = await gateway.services.consoleUsers.invite({
    email,
    role: 'member',
    account_id: account.accountId,
  });
  const token = invitation.invite_url.split('/').at(-1) ?? '';
  const accepted = await gateway.app.inject({
    method: 'POST',
    url: `/console/api/invitations/${token}`,
    payload: { password: MEMBER_PASSWORD },
  });
  expect(accepted.statusCode).toBe(200);
  const signIn = await gateway.app.inject({
    method: 'POST',
    url: '/console/api/session',
    payload: { email, password: MEMBER_PASSWORD },
  });
  expect(signIn.statusCode).toBe(200);
  const signed: Signed = {
    cookie: cookieOf(signIn),
    csrf: signIn.json<{ csrf_token: string }>().csrf_token,
  };
  return { ...account, email, signed };
}

/** A console call with the session's cookie and (unless `csrf: false`) its CSRF token. */
export function consoleCall(
  gateway: TestGateway,
  method: 'GET' | 'POST' | 'DELETE' | 'HEAD',
  url: string,
  options: {
    signed?: Signed;
    csrf?: boolean;
    body?: unknown;
    headers?: Record<string, string>;
  } = {},
): Promise<LightMyRequestResponse> {
  return gateway.app.inject({
    method,
    url,
    headers: {
      ...(options.signed === undefined ? {} : { cookie: options.signed.cookie }),
      ...(options.signed !== undefined && options.csrf !== false
        ? { 'x-csrf-token': options.signed.csrf }
        : {}),
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { payload: options.body as object }),
  });
}

function cookieOf(response: LightMyRequestResponse): string {
  const header = response.headers['set-cookie'];
  const first = Array.isArray(header) ? header[0] : header;
  const pair = first?.split(';')[0];
  if (pair === undefined) throw new Error('no Set-Cookie');
  return pair;
}
