import type { Budget } from '@tollgate/protocol';
import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import { ApiError, invalidInput, notFound } from '../errors/api-error.js';
import { parseInput, type Unparsed } from '../errors/input-schema.js';
import type { ApiKeyTable, Database, KeyIdempotency, KeyKind } from '../store/schema.js';
import type { Clock, IdGenerator } from '../util/effects.js';
import { refuseIfPast } from '../accounts/account-service.js';
import { generateApiKey, hashApiKey, isWellFormedKey } from './key-format.js';
import { cidrMatcher } from '../util/ip-allowlist.js';
import { DEFAULT_BUDGET_TIME_ZONE } from '../config/time-zone.js';
import { allowedIpsOf, keyModelsOf, keyView, type KeyView } from './key-view.js';
import { keyInput, keyUpdateInput, rotationInput } from './key-inputs.js';

/** What a route knows about the caller after authentication. */
export interface Principal {
  readonly keyId: string;
  readonly accountId: string;
  readonly kind: KeyKind;
  /** `null`: every model; otherwise the allowlist. */
  readonly models: readonly string[] | null;
  /** The key has a budget: its holds also reserve against it (budgets, docs/billing.md). */
  readonly budgeted: boolean;
  /** Whether a client address may use the key; absent or null: every address. */
  readonly addressAllowed?: ((address: string) => boolean) | null;
  /** `optional`: a business POST without `Idempotency-Key` gets one from the gateway. */
  readonly idempotency?: KeyIdempotency;
}

type CachedKey =
  | (Pick<
      ApiKeyTable,
      'id' | 'account_id' | 'kind' | 'expires_at' | 'disabled_at' | 'budget_limit' | 'idempotency'
    > & {
      models: readonly string[] | null;
      addressAllowed: ((address: string) => boolean) | null;
    })
  | null;

/** Keys remembered in memory at most (authentications and last-used writes each), by default. */
const MAX_CACHED_KEYS = 50_000;

/** Last-used times are written at most this often per key, off the request path. */
const LAST_USED_WRITE_INTERVAL_MS = 60_000;

/**
 * API keys: creation (plaintext returned once, SHA-256 stored), disabling, and authentication.
 * Authentication is served from an in-memory cache keyed by the key's hash, so the hot path
 * costs no database round trip. Expiry is checked against the clock on every request (exact
 * everywhere). A disable takes effect at once on the instance that made it (the entry is
 * evicted); on PostgreSQL every other instance is told by the database's change notice
 * (store/change-feed.ts calls `forget`) within about a second, and `cacheTtlMs` bounds it when
 * no notice arrives. Unknown keys are cached too (negative entries), so a flood of made-up but
 * well-formed keys cannot hammer the database.
 */
export class KeyService {
  private readonly cache: LRUCache<string, { value: CachedKey }>;
  /**
   * Counts the cache's evictions by a change (forget, forgetAll, this instance's own writes). A
   * lookup that read the database before an eviction may have read the row as it was before
   * the change: it answers with what it read but does not cache it, or the stale row would be
   * served until the TTL ran out.
   */
  private evictions = 0;
  /**
   * When each key's last use was last written; bounded like the cache (a forgotten key is written
   * again), so a flood of distinct keys cannot grow the process without end.
   */
  private readonly lastUsedWritten: LRUCache<string, number>;
  private readonly knownModels: ReadonlySet<string>;

  /** `modelIds`: the configured models, the only ids an allowlist (`models`) may name. */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    modelIds: readonly string[],
    cacheTtlMs: number,
    private readonly onBackgroundError: (error: unknown) => void = () => {},
    private readonly budgetTimeZone: string = DEFAULT_BUDGET_TIME_ZONE,
    /** Keys remembered at most, in each of the two maps (tests make it small). */
    maxCachedKeys: number = MAX_CACHED_KEYS,
  ) {
    this.knownModels = new Set(modelIds);
    this.lastUsedWritten = new LRUCache({ max: maxCachedKeys });
    this.cache = new LRUCache({
      max: maxCachedKeys,
      ttl: Math.max(cacheTtlMs, 1),
      ttlAutopurge: false,
    });
  }

  /**
   * A new key for an account. `models` (an allowlist) may name configured models only, and
   * `expires_at` must be in the future: a key born expired or allowed nothing that exists is an
   * operator's mistake, refused with a 400 naming the field.
   */
  async create(
    accountId: string,
    input: Unparsed<typeof keyInput>,
  ): Promise<KeyView & { key: string }> {
    const {
      kind,
      idempotency,
      models,
      name,
      expires_at: expiresAt,
      allowed_ips: allowedIps,
    } = parseInput(keyInput, input);
    const unknown = models?.find((model) => !this.knownModels.has(model));
    if (unknown !== undefined)
      throw invalidInput(
        'models',
        `names ${JSON.stringify(unknown).slice(0, 140)}, which is not a configured model`,
      );
    refuseIfPast(expiresAt, 'expires_at', this.clock);
    const account = await this.db
      .selectFrom('accounts')
      .select('id')
      .where('id', '=', accountId)
      .executeTakeFirst();
    if (account === undefined) throw notFound('account');
    const key = generateApiKey();
    const row: ApiKeyTable = {
      id: this.ids.next('key'),
      account_id: accountId,
      kind,
      name,
      key_hash: hashApiKey(key),
      key_hint: key.slice(-4),
      models: models === null ? null : JSON.stringify(models),
      expires_at: expiresAt,
      disabled_at: null,
      last_used_at: null,
      created_at: this.clock.now(),
      replaced_by: null,
      budget_limit: null,
      budget_window: null,
      budget_window_start: 0,
      budget_spent: 0,
      budget_held: 0,
      allowed_ips: allowedIps,
      idempotency,
    };
    await this.db.insertInto('api_keys').values(row).execute();
    return { ...this.view(row), key };
  }

  /**
   * Rotation: a new key with the old one's account, kind, name, model allowlist and expiry, and
   * the old key retired — at once, or after `expire_old_in_seconds` (at most 7 days) so callers
   * can switch without downtime. One transaction: only an active key that was never rotated can
   * be rotated (else 409 `KEY_NOT_ROTATABLE`, and no key is created). Records and tasks stay with
   * the key that created them (spec 5.5): read them with the old key while it still works.
   */
  async rotate(
    keyId: string,
    input: Unparsed<typeof rotationInput>,
  ): Promise<KeyView & { key: string; replaces: KeyView }> {
    const { expire_old_in_seconds: overlap } = parseInput(rotationInput, input);
    const now = this.clock.now();
    const key = generateApiKey();
    const rotated = await this.db.transaction().execute(async (trx) => {
      const old = await trx
        .selectFrom('api_keys')
        .selectAll()
        .where('id', '=', keyId)
        .executeTakeFirst();
      if (old === undefined) throw notFound('api key');
      const row: ApiKeyTable = {
        ...old,
        id: this.ids.next('key'),
        key_hash: hashApiKey(key),
        key_hint: key.slice(-4),
        disabled_at: null,
        last_used_at: null,
        created_at: now,
        replaced_by: null,
        // The budget and its spend carry over; the old key's open holds stay the old key's.
        budget_held: 0,
      };
      await trx.insertInto('api_keys').values(row).execute();
      const retireAt = now + overlap * 1000;
      const retired = await trx
        .updateTable('api_keys')
        .set(
          overlap === 0
            ? { disabled_at: now, replaced_by: row.id }
            : {
                expires_at: old.expires_at === null ? retireAt : Math.min(old.expires_at, retireAt),
                replaced_by: row.id,
              },
        )
        .where('id', '=', keyId)
        .where('replaced_by', 'is', null)
        .where('disabled_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .executeTakeFirst();
      if (retired.numUpdatedRows !== 1n)
        throw new ApiError(
          'KEY_NOT_ROTATABLE',
          `key ${keyId} is disabled, expired or already rotated; create a new key instead`,
        );
      const after = await trx
        .selectFrom('api_keys')
        .selectAll()
        .where('id', '=', keyId)
        .executeTakeFirstOrThrow();
      return { row, old: after };
    });
    // The old key's cached entry knows neither the disable nor the new expiry.
    this.evict(rotated.old.key_hash);
    return { ...this.view(rotated.row), key, replaces: this.view(rotated.old) };
  }

  /**
   * `PATCH /admin/v1/keys/{id}`: changes what may change on a key in place, today its
   * `allowed_ips` (`null` allows every address again). The cached entry is dropped here; other
   * instances are told by the change notice (as for a disable), `cacheTtlMs` bounding it.
   */
  async update(keyId: string, input: Unparsed<typeof keyUpdateInput>): Promise<KeyView> {
    const { allowed_ips: allowedIps } = parseInput(keyUpdateInput, input);
    const updated = await this.db
      .updateTable('api_keys')
      .set({ allowed_ips: allowedIps })
      .where('id', '=', keyId)
      .executeTakeFirst();
    if (updated.numUpdatedRows !== 1n) throw notFound('api key');
    const row = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', keyId)
      .executeTakeFirstOrThrow();
    this.evict(row.key_hash);
    return this.view(row);
  }

  /** The key's own budget as of now (`GET /v1/account`); null when it has none. */
  async budgetOf(keyId: string): Promise<Budget | null> {
    const row = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', keyId)
      .executeTakeFirst();
    if (row === undefined) throw notFound('api key');
    return this.view(row).budget;
  }

  /** A key as the admin API shows it, its budget as of now. */
  view(row: ApiKeyTable): KeyView {
    return keyView(row, this.clock.now(), this.budgetTimeZone);
  }

  async disable(keyId: string): Promise<KeyView> {
    const now = this.clock.now();
    await this.db
      .updateTable('api_keys')
      .set({ disabled_at: now })
      .where('id', '=', keyId)
      .where('disabled_at', 'is', null)
      .execute();
    const row = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', keyId)
      .executeTakeFirst();
    if (row === undefined) throw notFound('api key');
    this.evict(row.key_hash);
    return this.view(row);
  }

  /** Another writer changed the key with this hash (a change notice): read it again next time. */
  forget(keyHash: string): void {
    this.evict(keyHash);
  }

  /** Change notices may have been missed: read every key again. */
  forgetAll(): void {
    this.evictions += 1;
    this.cache.clear();
  }

  private evict(keyHash: string): void {
    this.evictions += 1;
    this.cache.delete(keyHash);
  }

  async list(accountId: string): Promise<KeyView[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .execute();
    return rows.map((row) => this.view(row));
  }

  /** Resolves a bearer token to a principal, or throws the 401 that says why. */
  async authenticate(token: string | undefined): Promise<Principal> {
    if (token === undefined)
      throw new ApiError(
        'UNAUTHENTICATED',
        'missing API key: send Authorization: Bearer <API_KEY>',
      );
    if (!isWellFormedKey(token))
      throw new ApiError('API_KEY_INVALID', 'malformed API key: check that it was copied whole');
    const hash = hashApiKey(token);
    let cached = this.cache.get(hash);
    if (cached === undefined) {
      const evictionsBefore = this.evictions;
      const row = await this.db
        .selectFrom('api_keys')
        .select([
          'id',
          'account_id',
          'kind',
          'models',
          'expires_at',
          'disabled_at',
          'budget_limit',
          'allowed_ips',
          'idempotency',
        ])
        .where('key_hash', '=', hash)
        .executeTakeFirst();
      // Its JSON columns are parsed once here, when the key enters the cache, not per request.
      const allowedIps = row === undefined ? null : allowedIpsOf(row);
      cached = {
        value:
          row === undefined
            ? null
            : {
                ...row,
                models: keyModelsOf(row),
                addressAllowed: allowedIps === null ? null : cidrMatcher(allowedIps),
              },
      };
      if (this.evictions === evictionsBefore) this.cache.set(hash, cached);
    }
    const key = cached.value;
    const now = this.clock.now();
    if (key === null) throw new ApiError('INVALID_API_KEY', 'unknown API key');
    if (key.disabled_at !== null) throw new ApiError('INVALID_API_KEY', 'this API key is disabled');
    if (key.expires_at !== null && key.expires_at <= now)
      throw new ApiError('INVALID_API_KEY', 'this API key has expired');
    this.touch(key.id, now);
    return {
      keyId: key.id,
      accountId: key.account_id,
      kind: key.kind,
      models: key.models,
      budgeted: key.budget_limit !== null,
      addressAllowed: key.addressAllowed,
      idempotency: key.idempotency,
    };
  }

  private touch(keyId: string, now: number): void {
    const last = this.lastUsedWritten.get(keyId) ?? 0;
    if (now - last < LAST_USED_WRITE_INTERVAL_MS) return;
    this.lastUsedWritten.set(keyId, now);
    this.db
      .updateTable('api_keys')
      .set({ last_used_at: now })
      .where('id', '=', keyId)
      .execute()
      .catch(this.onBackgroundError);
  }
}
