import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { TestGateway } from './gateway.js';

export const CONSOLE_PASSWORD = 'correct horse battery';

/** A signed-in console session: its cookie pair and CSRF token. */
export interface ConsoleSession {
  readonly cookie: string;
  readonly csrf: string;
  readonly userId: string;
  readonly email: string;
}

function cookieOf(response: LightMyRequestResponse): string {
  const header = response.headers['set-cookie'];
  const first = Array.isArray(header) ? header[0] : header;
  const pair = first?.split(';')[0];
  if (pair === undefined) throw new Error('no Set-Cookie');
  return pair;
}

/** Invites `email` as `role`, sets CONSOLE_PASSWORD through the link, and signs in. */
export async function consoleUser(
  gateway: TestGateway,
  email: string,
  role: 'member' | 'operator',
  accountId?: string,
): Promise<ConsoleSession> {
  const invitation = await gateway.services.consoleUsers.invite({
    email,
    role,
    ...(accountId === undefined ? {} : { account_id: accountId }),
  });
  const token = invitation.invite_url.split('/').at(-1) ?? '';
  const accepted = await gateway.app.inject({
    method: 'POST',
    url: `/console/api/invitations/${token}`,
    payload: { password: CONSOLE_PASSWORD },
  });
  expect(accepted.statusCode, accepted.body).toBe(200);
  const signedIn = await gateway.app.inject({
    method: 'POST',
    url: '/console/api/session',
    payload: { email, password: CONSOLE_PASSWORD },
  });
  expect(signedIn.statusCode, signedIn.body).toBe(200);
  const state = signedIn.json<{ csrf_token: string; user: { id: string } }>();
  return { cookie: cookieOf(signedIn), csrf: state.csrf_token, userId: state.user.id, email };
}

/** A `/console/api` call with the session's cookie and (unless `csrf: false`) its CSRF token. */
export function consoleCall(
  gateway: TestGateway,
  session: ConsoleSession,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  url: string,
  options: { body?: unknown; csrf?: boolean } = {},
): Promise<LightMyRequestResponse> {
  return gateway.app.inject({
    method,
    url,
    headers: {
      cookie: session.cookie,
      ...(options.csrf === false ? {} : { 'x-csrf-token': session.csrf }),
    },
    ...(options.body === undefined ? {} : { payload: options.body as object }),
  });
}
