import type { Kysely, Transaction } from 'kysely';
import { modelPriceIssues, TOKEN_PRICING_FIELDS, zeroPriceIssues } from '../config/price-rules.js';
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
 * How a model's configured prices stand against the store (`compareWithConfig`):
 * - `absent`: the store has no version of the model (the first start seeds version 1);
 * - `current`: the configuration's prices are the current version's;
 * - `older`: they are an older version's, not the current one's: applying them would go
 *   backwards (an old configuration during a rolling deploy, or an admin change made since);
 * - `new`: they are no stored version's: `tollgate prices sync` adds them as a new version.
 */
export type ConfigPriceStanding =
  | { readonly model: string; readonly state: 'absent' }
  | { readonly model: string; readonly state: 'current'; readonly current: string }
  | { readonly model: string; readonly state: 'new'; readonly current: string }
  | {
      readonly model: string;
      readonly state: 'older';
      readonly current: string;
      readonly older: string;
    };

/** Where an operator sees a price row that cannot be read (the request gets a 503). */
export type UnreadablePriceReport = (priceVersion: string, problem: string) => void;

/**
 * Versioned prices. The database keeps every version forever (records point at the version
 * that priced them); the newest version of a model is its current price. Prices are data: a
 * version is added only by an admin change (`set`) or an explicit `tollgate prices sync`
 * (`syncFromConfig`); starting an instance only seeds version 1 of a model the store has no
 * version of (`seedMissing`), and never adds or reverts anything else. Reads are served from
 * memory and refreshed after `ttlMs`; the instance that made a change sees it at once, and on
 * PostgreSQL every other one is told by the database's change notice (`forget`, from
 * store/change-feed.ts) within about a second, `ttlMs` bounding it when no notice arrives. Every row is parsed with the schema that wrote it:
 * an unreadable row prices nothing (503 MODEL_UNAVAILABLE, reported to the operator).
 */
export class PriceBook {
  private readonly current = new Map<string, { entry: PriceEntry; fetchedAt: number }>();
  private readonly firstPublished = new Map<string, number>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly models: readonly ModelConfig[],
    private readonly ttlMs: number,
    private readonly reportUnreadable: UnreadablePriceReport = () => undefined,
  ) {}

  /**
   * At start: gives every configured model that has no version at all its version 1 from the
   * configuration, and nothing else. Race-free across instances starting at once: version 1 is
   * inserted with `on conflict do nothing` on the (model, version) primary key, so exactly one
   * instance creates it. Answers how each model's configured prices stand afterwards, for the
   * start-up warnings; changes no existing version.
   */
  async seedMissing(): Promise<ConfigPriceStanding[]> {
    for (const model of this.models) {
      await this.db
        .insertInto('model_prices')
        .values(versionRow(model.id, 1, model.prices, 'config', this.clock.now()))
        .onConflict((conflict) => conflict.doNothing())
        .execute();
    }
    this.current.clear();
    return this.compareWithConfig();
  }

  /** How each configured model's prices stand against the store's versions (no change). */
  async compareWithConfig(): Promise<ConfigPriceStanding[]> {
    const standings: ConfigPriceStanding[] = [];
    for (const model of this.models) standings.push((await this.standingOf(model)).standing);
    return standings;
  }

  /**
   * `tollgate prices sync`: per configured model, seeds a missing model, adds the configuration's
   * prices as a new version when they are no stored version's, and leaves a model whose current
   * version already has them. It refuses to go backwards: configured prices equal to an older
   * version (not the current one) are refused for that model unless `force`, which adds them
   * again as a new version. Idempotent, also when two syncs run at once: the new version is the
   * judged current one + 1, inserted only if absent; a sync that loses that race judges again
   * against the version the other one added (and so finds its prices current).
   */
  async syncFromConfig(options: { readonly force: boolean }): Promise<PriceSyncResult[]> {
    const results: PriceSyncResult[] = [];
    for (const model of this.models) results.push(await this.syncModel(model, options.force));
    return results;
  }

  private async syncModel(model: ModelConfig, force: boolean): Promise<PriceSyncResult> {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const { standing, currentVersion } = await this.standingOf(model);
      if (standing.state === 'current')
        return { model: model.id, outcome: 'unchanged', price_version: standing.current };
      if (standing.state === 'older' && !force)
        return {
          model: model.id,
          outcome: 'refused',
          price_version: standing.current,
          message:
            `the configuration's prices are those of ${standing.older}, older than ` +
            `the current ${standing.current}: syncing would go backwards; ` +
            'change the configuration, or run tollgate prices sync --force to restore them',
        };
      const row = versionRow(
        model.id,
        currentVersion + 1,
        model.prices,
        'config',
        this.clock.now(),
      );
      const inserted = await this.db
        .insertInto('model_prices')
        .values(row)
        .onConflict((conflict) => conflict.doNothing())
        .executeTakeFirst();
      if (inserted.numInsertedOrUpdatedRows === 1n) {
        const entry = this.toEntry(row);
        this.current.set(model.id, { entry, fetchedAt: this.clock.now() });
        return { model: model.id, outcome: 'added', price_version: entry.priceVersion };
      }
    }
    throw new Error(`could not sync the prices of ${model.id}: its versions keep changing`);
  }

  /**
   * How one model's configured prices stand, and its current version number (0: none). Compares
   * the stored text (written as canonical JSON) without parsing it, so an unreadable row never
   * stops a start: it is reported when something reads it to price.
   */
  private async standingOf(
    model: ModelConfig,
  ): Promise<{ standing: ConfigPriceStanding; currentVersion: number }> {
    const [current, ...older] = await this.db
      .selectFrom('model_prices')
      .select(['version', 'price_version', 'prices'])
      .where('model', '=', model.id)
      .orderBy('version', 'desc')
      .execute();
    if (current === undefined)
      return { standing: { model: model.id, state: 'absent' }, currentVersion: 0 };
    const configured = canonicalJson(model.prices);
    const same =
      current.prices === configured ? undefined : older.find((row) => row.prices === configured);
    const standing: ConfigPriceStanding =
      current.prices === configured
        ? { model: model.id, state: 'current', current: current.price_version }
        : same === undefined
          ? { model: model.id, state: 'new', current: current.price_version }
          : {
              model: model.id,
              state: 'older',
              current: current.price_version,
              older: same.price_version,
            };
    return { standing, currentVersion: current.version };
  }

  /** The current price, from memory when read within `ttlMs` (quotes, lists, token requests). */
  async currentFor(model: string): Promise<PriceEntry> {
    return this.cachedFor(model) ?? this.currentUncached(model);
  }

  /**
   * `currentFor` when memory has it (read within `ttlMs`), without a promise: the chat route asks
   * on every request, and awaits `currentFor` only when this is `undefined`.
   */
  cachedFor(model: string): PriceEntry | undefined {
    const cached = this.current.get(model);
    return cached !== undefined && this.clock.now() - cached.fetchedAt < this.ttlMs
      ? cached.entry
      : undefined;
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
    const entry = this.toEntry(row);
    this.current.set(model, { entry, fetchedAt });
    return entry;
  }

  /** A new version of `model` was stored elsewhere (a change notice): read it again next time. */
  forget(model: string): void {
    this.current.delete(model);
  }

  /** Change notices may have been missed: read every price again. */
  forgetAll(): void {
    this.current.clear();
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
    return row === undefined ? undefined : this.toEntry(row);
  }

  async history(model: string): Promise<PriceEntry[]> {
    const rows = await this.db
      .selectFrom('model_prices')
      .selectAll()
      .where('model', '=', model)
      .orderBy('version', 'desc')
      .execute();
    return rows.map((row) => this.toEntry(row));
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
      const row = versionRow(model, version, prices, source, this.clock.now());
      const inserted = await this.db
        .insertInto('model_prices')
        .values(row)
        .onConflict((conflict) => conflict.doNothing())
        .executeTakeFirst();
      if (inserted.numInsertedOrUpdatedRows === 1n) return this.toEntry(row);
    }
    throw new Error(`could not add a price version for ${model}`);
  }

  /**
   * A stored row as a price entry, its prices parsed with the schema that writes them. A row
   * that fails it (edited by hand, written by a broken tool) never prices anything: the caller
   * gets 503 MODEL_UNAVAILABLE naming the version, and the operator a report.
   */
  private toEntry(row: PriceRow): PriceEntry {
    const parsed = parsePrices(row.prices);
    if (!parsed.success) {
      this.reportUnreadable(row.price_version, parsed.problem);
      throw new ApiError('MODEL_UNAVAILABLE', `price version ${row.price_version} is unreadable`);
    }
    return {
      model: row.model,
      version: row.version,
      priceVersion: row.price_version,
      prices: parsed.prices,
      createdAt: Number(row.created_at),
    };
  }
}

const NOT_INPUT_FIELDS = TOKEN_PRICING_FIELDS.filter(
  (field) => field !== 'input_per_million_tokens',
);
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

/** One outcome of `tollgate prices sync` per configured model (snake_case: printed as is). */
export interface PriceSyncResult {
  readonly model: string;
  /** `added`: a new version from the configuration; `unchanged`; `refused`: it would go back. */
  readonly outcome: 'added' | 'unchanged' | 'refused';
  /** The model's current version after the sync. */
  readonly price_version: string;
  readonly message?: string;
}

interface PriceRow {
  model: string;
  version: number;
  price_version: string;
  prices: string;
  created_at: number;
}

function versionRow(
  model: string,
  version: number,
  prices: ModelPrices,
  source: 'config' | 'admin',
  createdAt: number,
): PriceRow & { source: 'config' | 'admin' } {
  return {
    model,
    version,
    price_version: `${model}@${version}`,
    prices: canonicalJson(prices),
    source,
    created_at: createdAt,
  };
}

function parsePrices(
  text: string,
): { success: true; prices: ModelPrices } | { success: false; problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(text) as unknown;
  } catch (error) {
    return { success: false, problem: `not JSON: ${(error as Error).message}` };
  }
  const parsed = modelPricesSchema.safeParse(json);
  if (parsed.success) return { success: true, prices: parsed.data };
  const issue = parsed.error.issues[0];
  return {
    success: false,
    problem: `${issue?.path.join('.') || 'prices'}: ${issue?.message ?? 'invalid'}`,
  };
}
