import type { Kysely } from 'kysely';
import type { FastifyRequest } from 'fastify';
import type { Principal } from '../../auth/key-service.js';
import { keyModelsOf } from '../../auth/key-view.js';
import { requestFingerprint } from '../idempotency-judgement.js';
import { readIdempotencyKey } from '../../requests/idempotency.js';
import type { RequestIdentity } from '../../requests/request-service.js';
import type { Database } from '../../store/schema.js';

/**
 * The identity an owner's console call acts with on a record or task of the account: that of
 * the key which created it (docs/console.md, "Settling from the console"). The settle is then
 * the same business POST `/v1` runs — its own record under that key, the same idempotency rules
 * (`Idempotency-Key` required; a retry replays; the same key for another object is 409) and the
 * same money rules — so nothing about money is written twice. The key may be disabled or
 * expired since: the owner still pays for, and may settle, what it created. The record keeps
 * the console's path, so it says where the settle came from.
 */
export async function actingAsCreator(
  db: Kysely<Database>,
  request: FastifyRequest,
  keyId: string,
): Promise<RequestIdentity> {
  const key = await db
    .selectFrom('api_keys')
    .select(['id', 'account_id', 'kind', 'models', 'budget_limit'])
    .where('id', '=', keyId)
    .executeTakeFirstOrThrow();
  const principal: Principal = {
    keyId: key.id,
    accountId: key.account_id,
    kind: key.kind,
    models: keyModelsOf(key),
    // The creating key's budget binds what the owner settles on its behalf (docs/billing.md).
    budgeted: key.budget_limit !== null,
  };
  return {
    requestId: request.id,
    principal,
    idempotencyKey: readIdempotencyKey(request.headers),
    fingerprint: requestFingerprint(request),
    method: request.method,
    path: request.url.split('?')[0] ?? request.url,
    model: null,
  };
}
