import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import type { ConsoleIdentity, ConsoleSessions } from '../../users/console-sessions.js';
import { csrfTokenFor, sameSecret } from '../../users/console-tokens.js';

export const SESSION_COOKIE = 'tollgate_console';
export const CSRF_HEADER = 'x-csrf-token';

declare module 'fastify' {
  interface FastifyRequest {
    consoleIdentity: ConsoleIdentity | undefined;
  }
  interface FastifyContextConfig {
    /** A console route open without a session (sign-in, invitations). */
    consolePublic?: boolean;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/**
 * Every `/console/api` route needs a console session (the cookie), except those marked
 * `consolePublic`; every state-changing one also needs the session's CSRF token in
 * `X-CSRF-Token` (403 without it). API keys are never read here: the Authorization header opens
 * nothing (spec 5.4), and `/v1` never reads the cookie.
 */
export function requireConsoleSession(scope: FastifyInstance, sessions: ConsoleSessions): void {
  scope.decorateRequest('consoleIdentity', undefined);
  scope.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.consolePublic === true) return;
    const token = request.cookies[SESSION_COOKIE];
    if (token === undefined && request.headers.authorization !== undefined)
      throw new ApiError(
        'UNAUTHENTICATED',
        'API keys do not open the console; sign in with your email and password',
      );
    const identity = await sessions.authenticate(token);
    if (!SAFE_METHODS.has(request.method)) {
      const given = request.headers[CSRF_HEADER];
      if (typeof given !== 'string' || !sameSecret(given, csrfTokenFor(identity.token)))
        throw new ApiError(
          'PERMISSION_DENIED',
          'missing or wrong X-CSRF-Token: send the csrf_token of GET /console/api/session',
          'X-CSRF-Token',
        );
    }
    request.consoleIdentity = identity;
  });
}

export function identityOf(request: FastifyRequest): ConsoleIdentity {
  if (request.consoleIdentity === undefined)
    throw new ApiError('UNAUTHENTICATED', 'sign in to the console first');
  return request.consoleIdentity;
}

/** The member's account; operators have none (403). */
export function memberAccountOf(request: FastifyRequest): string {
  const { user } = identityOf(request);
  if (user.role !== 'member' || user.account_id === null)
    throw new ApiError('PERMISSION_DENIED', 'this page is for members of an account');
  return user.account_id;
}

/**
 * The session cookie: `HttpOnly` (no script reads it), `SameSite=Lax` (no cross-site POST carries
 * it), `Path=/console` (never sent to `/v1`), and `Secure` when the request came over https or
 * the configuration says the console sits behind https.
 */
export function setSessionCookie(
  reply: FastifyReply,
  request: FastifyRequest,
  token: string,
  maxAgeSeconds: number,
  secureAlways: boolean,
): void {
  void reply.setCookie(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/console',
    secure: secureAlways || request.protocol === 'https',
    maxAge: maxAgeSeconds,
  });
}

export function clearSessionCookie(
  reply: FastifyReply,
  request: FastifyRequest,
  secureAlways: boolean,
): void {
  void reply.clearCookie(SESSION_COOKIE, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/console',
    secure: secureAlways || request.protocol === 'https',
  });
}
