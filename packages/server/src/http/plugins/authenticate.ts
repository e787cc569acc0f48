import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { KeyService, Principal } from '../../auth/key-service.js';
import { ApiError } from '../../errors/api-error.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | undefined;
  }
}

/**
 * The one `Authorization` header of a request. Several are refused: which one counts is
 * ambiguous (Node keeps the first and drops the rest, a proxy in front may keep the last), and
 * a credential check must never depend on that. Counted on the raw headers, since
 * `request.headers` has already dropped the duplicates.
 */
export function soleAuthorizationHeader(request: FastifyRequest): string | undefined {
  return soleCredentialHeader(request, 'authorization', 'Authorization');
}

function soleCredentialHeader(
  request: FastifyRequest,
  name: 'authorization' | 'x-api-key',
  spelled: string,
): string | undefined {
  const raw = request.raw.rawHeaders;
  let count = 0;
  for (let index = 0; index < raw.length; index += 2)
    if (raw[index]?.toLowerCase() === name) count += 1;
  if (count > 1)
    throw new ApiError(
      'API_KEY_INVALID',
      `send exactly one ${spelled} header; this request has ${count}`,
      spelled,
    );
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** Reads `Authorization: Bearer <key>`; anything else in that header is malformed. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = soleAuthorizationHeader(request);
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (match === null)
    throw new ApiError('API_KEY_INVALID', 'the Authorization header must be "Bearer <API_KEY>"');
  return match[1];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route speaks a protocol whose clients send the key as `x-api-key` (Anthropic's
     * Messages routes). Elsewhere that header is not a credential, as before.
     */
    acceptsXApiKey?: boolean;
  }
}

/**
 * The API key of a request: `Authorization: Bearer <key>`, or, on the routes of Anthropic's
 * protocol (`acceptsXApiKey`), `x-api-key: <key>` as Anthropic's clients send it
 * (docs/anthropic-messages.md, "Authentication"). Both may be sent when they name the same key;
 * two different keys are refused (401), since which one counts would be a guess.
 */
export function apiKeyOf(request: FastifyRequest): string | undefined {
  const bearer = bearerToken(request);
  if (request.routeOptions.config.acceptsXApiKey !== true) return bearer;
  const header = soleCredentialHeader(request, 'x-api-key', 'x-api-key');
  const apiKey = header?.trim();
  if (apiKey === undefined || apiKey === '') return bearer;
  if (bearer !== undefined && bearer !== apiKey)
    throw new ApiError(
      'API_KEY_INVALID',
      'Authorization and x-api-key name different keys; send one key, in one of them',
      'x-api-key',
    );
  return apiKey;
}

/**
 * Every route in this scope needs a valid API key (`apiKeyOf`), used from an address its `allowed_ips`
 * admits (the client address: `request.clientAddress`, auth/client-address.ts). The refusal names the
 * rule, never the key's list (which would tell a thief where to stand). `admit` runs next in the
 * same hook, once the key is known (the rate limits): one hook per request rather than two.
 */
export function requireApiKey(
  scope: FastifyInstance,
  keys: KeyService,
  admit?: (request: FastifyRequest, principal: Principal) => Promise<void>,
): void {
  scope.decorateRequest('principal', undefined);
  scope.addHook('onRequest', async (request) => {
    const principal = await keys.authenticate(apiKeyOf(request));
    if (principal.addressAllowed != null && !principal.addressAllowed(request.clientAddress))
      throw new ApiError(
        'PERMISSION_DENIED',
        "this API key's allowed_ips rule does not admit the address this request came from; use it from an allowed network, or ask the operator to change the key's allowed_ips",
      );
    request.principal = principal;
    if (admit !== undefined) await admit(request, principal);
  });
}

export function principalOf(request: FastifyRequest): Principal {
  if (request.principal === undefined) throw new ApiError('UNAUTHENTICATED', 'missing API key');
  return request.principal;
}

/** Personal-key-only routes (assets, account views): service keys get 403. */
export function requirePersonal(principal: Principal): void {
  if (principal.kind !== 'personal')
    throw new ApiError(
      'PERMISSION_DENIED',
      'this route needs a personal API key; service keys may not use it',
    );
}
