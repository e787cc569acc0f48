import type { Kysely, Transaction } from 'kysely';
import { modelPriceIssues, TOKEN_PRICE_FIELDS, zeroPriceIssues } from '../config/price-rules.js';
import {
  modelPricesSchema,
  type Family,
  type ModelConfig,
  type ModelPrices,
} from '../config/schema.js';
import { ApiError, invalidInput } from '../errors/api-error.js';
import type { Database } from '../store/schema.js';
import { canonicalJson } from '../util/canonical-json.js';
import type { Clock } from '../util/effects.js';

export interface PriceEntry {
  readonly model: string;
  readonly version: number;
  /** `<model>@<version>`: what callers see and echo back. */
  readonly priceVersion: string;
  /** Token prices and, for images and videos, task prices (config/schema.ts). */
  readonly prices: ModelPrices;
  readonly createdAt: number;
}

/**
 * Versioned prices. The database keeps every version forever (records point at the version
 * that priced them); the newest version of a model is its current price. Config prices seed the
 * first version; when the config's prices change, start-up adds a new version; an admin change
 * adds a new version at once. Reads are served from memory and refreshed after `ttlMs`, so
 * another instance's change is seen within that delay; the instance that made it sees it at once.
 */
export class PriceBook {
  private readonly current = new Map<string, { entry: PriceEntry; fetchedAt: number }>();
  private readonly firstPublished = new Map<string, number>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly models: readonly ModelConfig[],
    private readonly ttlMs: number,
  ) {}

  /** At start: make sure every configured model has a version matching its config prices. */
  async syncWithConfig(): Promise<void> {
    for (const model of this.models) {
      const lastFromConfig = await this.db
        .selectFrom('model_prices')
        .select('prices')
        .where('model', '=', model.id)
        .where('source', '=', 'config')
        .orderBy('version', 'desc')
        .limit(1)
        .executeTakeFirst();
      if (lastFromConfig === undefined || lastFromConfig.prices !== canonicalJson(model.prices)) {
        await this.insertVersion(model.id, model.prices, 'config');
      }
    }
    this.current.clear();
  }

  /** The current price, from memory when read within `ttlMs` (quotes, lists, token requests). */
  async currentFor(model: string): Promise<PriceEntry> {
    const cached = this.current.get(model);
    if (cached !== undefined && this.clock.now() - cached.fetchedAt < this.ttlMs)
      return cached.entry;
    return this.currentUncached(model);
  }

  /**
   * The current price read from the database, never from memory, optionally inside the
   * caller's transaction. Task creation judges the caller's `expected_price_version` with it,
   * so an instance that has not yet seen another instance's price change cannot accept a stale
   * version. Refreshes the cache as a side effect.
   */
  async currentUncached(
    model: string,
    executor: Kysely<Database> | Transaction<Database> = this.db,
  ): Promise<PriceEntry> {
    const fetchedAt = this.clock.now();
    const row = await executor
      .selectFrom('model_prices')
      .selectAll()
      .where('model', '=', model)
      .orderBy('version', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (row === undefined) throw new ApiError('MODEL_UNAVAILABLE', `model ${model} has no price`);
    const entry = toEntry(row);
    this.current.set(model, { entry, fetchedAt });
    return entry;
  }

  /**
   * When the model's first price version was stored (ms): the same on every instance and after
   * every restart, and it never changes, so it is cached for good. `GET /v1/models` shows it as
   * OpenAI's `created`.
   */
  async firstPublishedAt(model: string): Promise<number> {
    const known = this.firstPublished.get(model);
    if (known !== undefined) return known;
    const row = await this.db
      .selectFrom('model_prices')
      .select('created_at')
      .where('model', '=', model)
      .orderBy('version', 'asc')
      .limit(1)
      .executeTakeFirst();
    if (row === undefined) throw new ApiError('MODEL_UNAVAILABLE', `model ${model} has no price`);
    this.firstPublished.set(model, Number(row.created_at));
    return Number(row.created_at);
  }

  async byVersion(priceVersion: string): Promise<PriceEntry | undefined> {
    const row = await this.db
      .selectFrom('model_prices')
      .selectAll()
      .where('price_version', '=', priceVersion)
      .executeTakeFirst();
    return row === undefined ? undefined : toEntry(row);
  }

  async history(model: string): Promise<PriceEntry[]> {
    const rows = await this.db
      .selectFrom('model_prices')
      .selectAll()
      .where('model', '=', model)
      .orderBy('version', 'desc')
      .execute();
    return rows.map(toEntry);
  }

  /**
   * Admin change: validates the price fields (naming the bad one) and adds a new version. The
   * body is the model's whole price list (not a patch). A price of 0 makes something free of
   * charge, so it is taken only with `"free": true` in the same body (not stored: it only
   * confirms the zeros). Which fields a model needs or may have follows its families
   * (config/price-rules.ts); models whose every family bills input tokens alone (embeddings,
   * rerank) take no output, reasoning or cached-input price.
   */
  async set(modelId: string, body: unknown): Promise<PriceEntry> {
    const model = this.models.find((candidate) => candidate.id === modelId);
    if (model === undefined)
      throw new ApiError('MODEL_NOT_FOUND', `no model ${modelId} in the configuration`);
    const { free, prices } = splitFreeFlag(body);
    const parsed = modelPricesSchema.safeParse(prices);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const unknownField = issue?.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
      const path = issue?.path.map(String) ?? [];
      const field =
        unknownField === undefined ? path.join('.') || 'body' : [...path, unknownField].join('.');
      throw invalidInput(
        field,
        unknownField === undefined
          ? (issue?.message ?? 'invalid prices')
          : 'is not a known price field',
      );
    }
    const broken = modelPriceIssues(model, parsed.data, 'admin')[0];
    if (broken !== undefined) {
      // Paths start at the model (`prices.per_image`); the body is the prices object itself.
      const path = broken.path[0] === 'prices' ? broken.path.slice(1) : broken.path;
      const message = broken.message === 'required' ? 'required for this model' : broken.message;
      throw invalidInput(path.join('.'), message);
    }
    if (model.families.every((family) => INPUT_ONLY_FAMILIES.has(family))) {
      const extra = NOT_INPUT_FIELDS.find((field) => parsed.data[field] !== undefined);
      if (extra !== undefined)
        throw invalidInput(
          extra,
          `${model.id} (${model.families.join(', ')}) bills input tokens only; give input_per_million_tokens alone`,
        );
    }
    const zero = zeroPriceIssues(parsed.data, free, 'admin')[0];
    if (zero !== undefined) {
      const path = zero.path[0] === 'prices' ? zero.path.slice(1) : zero.path;
      throw invalidInput(path.join('.'), zero.message);
    }
    const entry = await this.insertVersion(modelId, parsed.data, 'admin');
    this.current.set(modelId, { entry, fetchedAt: this.clock.now() });
    return entry;
  }

  private async insertVersion(
    model: string,
    prices: ModelPrices,
    source: 'config' | 'admin',
  ): Promise<PriceEntry> {
    // Two writers racing for the same version number: the primary key refuses one; retry it.
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const last = await this.db
        .selectFrom('model_prices')
        .select('version')
        .where('model', '=', model)
        .orderBy('version', 'desc')
        .limit(1)
        .executeTakeFirst();
      const version = (last?.version ?? 0) + 1;
      const row = {
        model,
        version,
        price_version: `${model}@${version}`,
        prices: canonicalJson(prices),
        source,
        created_at: this.clock.now(),
      };
      const inserted = await this.db
        .insertInto('model_prices')
        .values(row)
        .onConflict((conflict) => conflict.doNothing())
        .executeTakeFirst();
      if (inserted.numInsertedOrUpdatedRows === 1n) return toEntry(row);
    }
    throw new Error(`could not add a price version for ${model}`);
  }
}

const NOT_INPUT_FIELDS = TOKEN_PRICE_FIELDS.filter((field) => field !== 'input_per_million_tokens');
/** Families billed on input tokens alone (docs/billing.md, "Text family"). */
const INPUT_ONLY_FAMILIES: ReadonlySet<Family> = new Set<Family>(['embeddings', 'rerank']);

/** Takes `free` (a boolean confirming zero prices) out of an admin price body. */
function splitFreeFlag(body: unknown): { free: boolean | undefined; prices: unknown } {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || !('free' in body))
    return { free: undefined, prices: body };
  const { free, ...prices } = body as Record<string, unknown>;
  if (typeof free !== 'boolean') throw invalidInput('free', 'must be true or false');
  return { free, prices };
}

function toEntry(row: {
  model: string;
  version: number;
  price_version: string;
  prices: string;
  created_at: number;
}): PriceEntry {
  return {
    model: row.model,
    version: row.version,
    priceVersion: row.price_version,
    prices: JSON.parse(row.prices) as ModelPrices,
    createdAt: row.created_at,
  };
}
