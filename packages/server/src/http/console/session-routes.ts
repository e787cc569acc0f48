import type {
  ConsoleConfig,
  ConsoleInvitationState,
  ConsoleSessionList,
  ConsoleSessionState,
  ConsoleTotpSetup,
} from '@tollgate/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import { CREDENTIAL_ROUTES } from '../../log-redaction.js';
import {
  clearSessionCookie,
  identityOf,
  requireConsoleSession,
  setSessionCookie,
} from './console-auth.js';
import {
  SESSION_LIFETIME_MS,
  type ClientOrigin,
  type ConsoleIdentity,
} from '../../users/console-sessions.js';
import { csrfTokenFor } from '../../users/console-tokens.js';
import { consoleUserView } from '../../users/console-users.js';
import type { ConsoleDeps } from './console-deps.js';

/** `GET /console/api/session` and the answer of a sign-in: who, and the CSRF token to send back. */
function sessionAnswer(identity: ConsoleIdentity): ConsoleSessionState {
  return {
    object: 'console_session_state',
    user: consoleUserView(identity.user),
    csrf_token: csrfTokenFor(identity.token),
    session_id: identity.session.id,
    expires_at: new Date(identity.session.expires_at).toISOString(),
  };
}

/**
 * Sign-in, sign-out, sessions, password and invitations (names fixed by issue 20). Sign-in and
 * the invitation calls need no session; everything else does (console-auth.ts).
 */
export function registerSessionRoutes(scope: FastifyInstance, deps: ConsoleDeps): void {
  requireConsoleSession(scope, deps.consoleSessions);
  const secureAlways = deps.config.server.console_secure_cookie;
  const open = { config: { consolePublic: true } };

  scope.get<{ Params: { token: string } }>(
    CREDENTIAL_ROUTES.invitation,
    open,
    async (request): Promise<ConsoleInvitationState> => ({
      object: 'console_invitation_state',
      ...(await deps.consoleUsers.invitation(request.params.token)),
    }),
  );

  scope.post<{ Params: { token: string }; Body: { password?: unknown } | undefined }>(
    CREDENTIAL_ROUTES.invitation,
    open,
    async (request) =>
      deps.consoleUsers.acceptInvitation(request.params.token, bodyObject(request.body)),
  );

  scope.post<{ Body: Record<string, unknown> | undefined }>(
    '/console/api/session',
    open,
    async (request, reply) => {
      const { token, identity } = await deps.consoleSessions.signIn(
        bodyObject(request.body),
        originOf(request),
      );
      setSessionCookie(reply, request, token, SESSION_LIFETIME_MS / 1000, secureAlways);
      return sessionAnswer(identity);
    },
  );

  // What the signed-out pages need to know: whether the sign-in page links to a sign-up.
  scope.get('/console/api/config', open, async (): Promise<ConsoleConfig> => ({
    object: 'console_config',
    self_signup: deps.consoleSignUp.enabled,
  }));

  // Self sign-up (docs/console.md): a new account and its member, signed in; 403 when turned off.
  scope.post<{ Body: Record<string, unknown> | undefined }>(
    '/console/api/signup',
    open,
    async (request, reply) => {
      const { token, identity } = await deps.consoleSignUp.signUp(
        bodyObject(request.body),
        originOf(request),
      );
      setSessionCookie(reply, request, token, SESSION_LIFETIME_MS / 1000, secureAlways);
      return reply.code(201).send(sessionAnswer(identity));
    },
  );

  scope.get('/console/api/session', async (request) => sessionAnswer(identityOf(request)));

  scope.delete('/console/api/session', async (request, reply) => {
    await deps.consoleSessions.signOut(identityOf(request));
    clearSessionCookie(reply, request, secureAlways);
    return reply.code(204).send();
  });

  scope.get('/console/api/sessions', async (request): Promise<ConsoleSessionList> => ({
    object: 'list',
    data: await deps.consoleSessions.list(identityOf(request)),
  }));

  scope.delete<{ Params: { id: string } }>('/console/api/sessions/:id', async (request, reply) => {
    await deps.consoleSessions.revoke(identityOf(request), request.params.id);
    return reply.code(204).send();
  });

  // The TOTP second factor (docs/console.md, "Second factor"): a secret, then its first code.
  scope.post('/console/api/totp', async (request): Promise<ConsoleTotpSetup> => ({
    object: 'console_totp_setup',
    ...(await deps.consoleTotp.setup(identityOf(request))),
  }));
  scope.post<{ Body: Record<string, unknown> | undefined }>(
    '/console/api/totp/enable',
    async (request, reply) => {
      await deps.consoleTotp.enable(identityOf(request), bodyObject(request.body));
      return reply.code(204).send();
    },
  );

  // Removing the factor: proved with a current code or the password (totp.ts).
  scope.delete<{ Body: Record<string, unknown> | undefined }>(
    '/console/api/totp',
    async (request, reply) => {
      await deps.consoleTotp.disable(
        identityOf(request),
        bodyObject(request.body),
        request.clientAddress,
      );
      return reply.code(204).send();
    },
  );

  scope.post<{ Body: Record<string, unknown> | undefined }>(
    '/console/api/password',
    async (request, reply) => {
      await deps.consoleSessions.changePassword(
        identityOf(request),
        bodyObject(request.body),
        request.clientAddress,
      );
      return reply.code(204).send();
    },
  );
}

/**
 * Where a sign-in or sign-up comes from: the client address by the gateway's one rule
 * (auth/client-address.ts; behind `server.trusted_proxies`, the client, not the proxy), which
 * the throttle counts and the session records, and the browser.
 */
function originOf(request: FastifyRequest): ClientOrigin {
  return { address: request.clientAddress, userAgent: request.headers['user-agent'] ?? '' };
}

/** The JSON object a console call sends; anything else is 400 naming `body`. */
export function bodyObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new ApiError('INVALID_INPUT', 'body: must be a JSON object', 'body');
  return body as Record<string, unknown>;
}
