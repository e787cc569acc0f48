import { sql, type Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import { KeyedBatcher, type BatchItem } from '../util/keyed-batcher.js';
import { ALL_ACCOUNTS } from './batched-accounts.js';

/** The most lookups in one statement (bounds its parameters). */
const MAX_BATCH = 500;

/** What the idempotency guard judges: the record an idempotency key already names. */
export type Fingerprint = { readonly id: string; readonly fingerprint: string } | undefined;

interface Lookup extends BatchItem<Fingerprint> {
  readonly keyId: string;
  readonly idempotencyKey: string;
}

/**
 * The idempotency guard's reads for PostgreSQL (http/plugins/idempotency-guard.ts), batched:
 * every business POST reads whether its idempotency key is used before anything else, one round
 * trip and one statement each. The reads that arrive on this instance within one event-loop turn
 * (or while the previous batch runs) share one statement instead, by the unique (key_id,
 * idempotency_key) index. A read is a moment's view either way: the claim judges again inside
 * its transaction (request-service.ts), so answering a little later changes nothing.
 */
export class BatchedFingerprints {
  readonly #batcher: KeyedBatcher<Lookup>;

  constructor(
    private readonly db: Kysely<Database>,
    /** One lookup alone: the prepared single statement (request-store.ts). */
    private readonly alone: (keyId: string, idempotencyKey: string) => Promise<Fingerprint>,
  ) {
    this.#batcher = new KeyedBatcher((_lane, batch) => this.#read(batch), {
      maxBatch: MAX_BATCH,
    });
  }

  fingerprintOf(keyId: string, idempotencyKey: string): Promise<Fingerprint> {
    return new Promise((resolve, reject) =>
      this.#batcher.add(ALL_ACCOUNTS, { keyId, idempotencyKey, resolve, reject }),
    );
  }

  async #read(batch: readonly Lookup[]): Promise<void> {
    if (batch.length === 1) {
      const [only] = batch;
      only!.resolve(await this.alone(only!.keyId, only!.idempotencyKey));
      return;
    }
    const asked = batch.map(
      (item) => sql`(cast(${item.keyId} as text), cast(${item.idempotencyKey} as text))`,
    );
    const { rows } = await sql<{
      id: string;
      fingerprint: string;
      key_id: string;
      idempotency_key: string;
    }>`select requests.id, requests.fingerprint, requests.key_id, requests.idempotency_key
      from requests join (values ${sql.join(asked)}) as asked (key_id, idempotency_key)
        on requests.key_id = asked.key_id and requests.idempotency_key = asked.idempotency_key`.execute(
      this.db,
    );
    const found = new Map(
      rows.map((row) => [
        keyOf(row.key_id, row.idempotency_key),
        { id: row.id, fingerprint: row.fingerprint },
      ]),
    );
    for (const item of batch) item.resolve(found.get(keyOf(item.keyId, item.idempotencyKey)));
  }
}

const keyOf = (keyId: string, idempotencyKey: string) => `${keyId}\n${idempotencyKey}`;
