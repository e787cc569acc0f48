import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import {
  RequestService,
  type RecordedOutcome,
  type RequestIdentity,
} from '../../src/requests/request-service.js';
import type { Database } from '../../src/store/schema.js';
import { createIdGenerator, systemClock, type IdGenerator } from '../../src/util/effects.js';
import type { TestDialect } from './dialects.js';
import { oneMicroYuanEmbeddingsConfig, startGateway, type TestGateway } from './gateway.js';

/**
 * A gateway with one account of `balance`, and a `RequestService` on its database with money
 * batching on for PostgreSQL (off for SQLite, whose answers are the one-at-a-time reference),
 * for tests that drive claims and outcomes directly (requests/batched-*.ts).
 */
export async function moneyService(
  dialect: TestDialect,
  balance: number,
  options: { ids?: IdGenerator; warn?: (...args: unknown[]) => void } = {},
): Promise<{
  gateway: TestGateway;
  accountId: string;
  keyId: string;
  requests: RequestService;
  /** A new request of the first account, or of `of` (another account's key). */
  identity: (budgeted?: boolean, of?: { accountId: string; keyId: string }) => RequestIdentity;
  /** Another `RequestService` on the same database: a second instance's. */
  another: () => RequestService;
}> {
  const gateway = await startGateway(dialect, { config: oneMicroYuanEmbeddingsConfig() });
  const { accountId, keyId } = await gateway.account(balance);
  const effects = { clock: systemClock, ids: options.ids ?? createIdGenerator() };
  const another = () =>
    new RequestService(
      gateway.services.store.db,
      effects,
      86_400_000,
      { warn: options.warn ?? (() => {}), info: () => {} },
      // As services.ts wires it: SQLite never batches (its group commit shares the COMMIT).
      dialect.name === 'postgres',
    );
  const requests = another();
  const identity = (
    budgeted = false,
    of: { accountId: string; keyId: string } = { accountId, keyId },
  ): RequestIdentity => ({
    requestId: `req_${randomUUID()}`,
    principal: { ...of, kind: 'personal', models: null, budgeted },
    idempotencyKey: randomUUID(),
    fingerprint: 'f',
    method: 'POST',
    path: '/v1/embeddings',
    model: 'sim-embed',
  });
  return { gateway, accountId, keyId, requests, identity, another };
}

/** A claimed request and its hold, ready to be finished. */
export interface ClaimedRequest {
  readonly identity: RequestIdentity;
  readonly holdId: string;
}

/**
 * Claims `count` requests one after another, each holding `hold`, of the first account or of
 * `of`; with `budgeted`, against the key's budget too. Throws unless every one is claimed.
 */
export async function claimedOneByOne(
  service: Pick<Awaited<ReturnType<typeof moneyService>>, 'requests' | 'identity'>,
  count: number,
  hold: number,
  options: { of?: { accountId: string; keyId: string }; budgeted?: boolean } = {},
): Promise<ClaimedRequest[]> {
  const claims: ClaimedRequest[] = [];
  for (let index = 0; index < count; index += 1) {
    const identity = service.identity(options.budgeted ?? false, options.of);
    const claim = await service.requests.claim(identity, { amount: hold, priceVersion: 'v1' });
    if (claim.kind !== 'claimed' || claim.holdId === null) throw new Error('not claimed');
    claims.push({ identity, holdId: claim.holdId });
  }
  return claims;
}

/**
 * Counts `update accounts` statements from now on, with a trigger in the test's own database
 * (prepared statements bypass Kysely's plugins). Every statement here updates one row, so
 * SQLite's row trigger counts statements too.
 */
export async function countAccountUpdates(db: Kysely<Database>, dialect: 'sqlite' | 'postgres') {
  await sql`create table account_updates (n integer not null)`.execute(db);
  await sql`insert into account_updates (n) values (0)`.execute(db);
  if (dialect === 'postgres') {
    await sql`create function count_account_update() returns trigger language plpgsql as $$ begin update account_updates set n = n + 1; return null; end $$`.execute(
      db,
    );
    await sql`create trigger count_account_update after update on accounts for each statement execute function count_account_update()`.execute(
      db,
    );
  } else {
    await sql`create trigger count_account_update after update on accounts begin update account_updates set n = n + 1; end`.execute(
      db,
    );
  }
  return async () => {
    const { rows } = await sql<{ n: number }>`select n from account_updates`.execute(db);
    return Number(rows[0]?.n);
  };
}

/** A priced result of `amount` (usage `tokens: amount`), as a text request's finish records it. */
export const succeededOutcome = (amount: number): RecordedOutcome => ({
  kind: 'succeeded',
  body: { charged: amount },
  usage: { tokens: amount },
  amount,
  pricingRule: 'test',
  upstreamRequestId: null,
});

/**
 * Claims of a balance of 10, and what one at a time admits of them in arrival order: 6 fits, the
 * second 6 does not (4 left), 3 fits, 1 fits, the last 1 does not (held 10).
 */
export const ONE_AT_A_TIME = {
  balance: 10,
  amounts: [6, 6, 3, 1, 1],
  kinds: ['claimed', 'refused', 'claimed', 'claimed', 'refused'],
} as const;
