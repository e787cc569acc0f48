import type { FastifyRequest } from 'fastify';
import type { Principal } from '../../auth/key-service.js';
import { requestFingerprint } from '../idempotency-judgement.js';
import { readIdempotencyKey } from '../../requests/idempotency.js';
import type { RequestIdentity } from '../../requests/request-service.js';
import { identityOf, memberAccountOf } from './console-auth.js';

/**
 * The identity a member's console call acts with when no key made the object it acts on: an
 * upload from the console, a share asked for from the console (docs/console.md, "Assets and
 * shares"). Its key id is `console:<user id>` — no API key has such an id (keys are `key_…`), so
 * nothing it creates is any key's (every key gets the 404 of a missing id), its records and
 * journal rows say where they came from, and its idempotency keys are this user's own. It has
 * no budget (nothing it does costs money) and no model allowlist (the owner's account).
 */
export function consolePrincipal(request: FastifyRequest): Principal {
  const accountId = memberAccountOf(request);
  return {
    keyId: `console:${identityOf(request).user.id}`,
    accountId,
    kind: 'personal',
    models: null,
    budgeted: false,
  };
}

/** A business POST of the console acting as `consolePrincipal` (`Idempotency-Key` required). */
export function consoleRequestIdentity(request: FastifyRequest): RequestIdentity {
  return {
    requestId: request.id,
    principal: consolePrincipal(request),
    idempotencyKey: readIdempotencyKey(request.headers),
    fingerprint: requestFingerprint(request),
    method: request.method,
    path: request.url.split('?')[0] ?? request.url,
    model: null,
  };
}
