import type { ModelPricing } from '@tollgate/protocol';
import type { Principal } from '../auth/key-service.js';
import type { PriceBook, PriceEntry } from '../billing/price-book.js';
import { offeredImageSizes, offeredVideoSizes } from '../billing/task-pricing.js';
import { billsTokens, TOKEN_PRICING_FIELDS } from '../config/price-rules.js';
import type { Family, ModelConfig, ModelPrices, TaskPrices } from '../config/schema.js';
import { ApiError } from '../errors/api-error.js';

/** The configured models, filtered by what a key may call. */
export class ModelCatalog {
  private readonly byId: ReadonlyMap<string, ModelConfig>;

  constructor(
    readonly models: readonly ModelConfig[],
    private readonly prices: PriceBook,
  ) {
    this.byId = new Map(models.map((model) => [model.id, model]));
  }

  /** `principal.models`: a key's allowlist, or `null` (every model: what a new key may be allowed). */
  callableBy(principal: Pick<Principal, 'models'>): ModelConfig[] {
    return this.models.filter(
      (model) => principal.models === null || principal.models.includes(model.id),
    );
  }

  /**
   * The model a request names, if this key may call it for this family. Unknown, not allowed
   * and wrong family all give the same 404, so a key learns nothing about models it cannot use.
   */
  resolve(principal: Principal, modelId: string, family: Family): ModelConfig {
    const model = this.byId.get(modelId);
    const allowed =
      model !== undefined && (principal.models === null || principal.models.includes(model.id));
    if (!allowed || !model.families.includes(family)) {
      throw new ApiError(
        'MODEL_NOT_FOUND',
        `model ${JSON.stringify(modelId).slice(0, 140)} does not exist or this key may not call it for ${family}; GET /v1/models lists the models this key may call`,
        'model',
      );
    }
    return model;
  }

  /** A model this key may call, whatever its family (asset uploads name their target model). */
  resolveAny(principal: Principal, modelId: string): ModelConfig {
    const model = this.byId.get(modelId);
    if (
      model === undefined ||
      (principal.models !== null && !principal.models.includes(model.id))
    ) {
      throw new ApiError(
        'MODEL_NOT_FOUND',
        `model ${JSON.stringify(modelId).slice(0, 140)} does not exist or this key may not call it`,
        'X-Tollgate-Model',
      );
    }
    return model;
  }

  /** `GET /v1/models` entries: OpenAI's fields plus capabilities and current pricing. */
  async list(principal: Pick<Principal, 'models'>) {
    const models = this.callableBy(principal);
    return Promise.all(
      models.map(async (model) => {
        const price = await this.prices.currentFor(model.id);
        // When the model was first priced here: the same on every instance (not a start time).
        const created = await this.prices.firstPublishedAt(model.id);
        return {
          id: model.id,
          object: 'model' as const,
          created: Math.floor(created / 1000),
          owned_by: model.owned_by,
          capabilities: {
            families: model.families,
            ...(model.families.includes('chat') ? { combinations: model.combinations } : {}),
            ...taskCapabilities(model, price.prices),
          },
          pricing: pricingEntry(model, price),
        };
      }),
    );
  }
}

/** The unit of each task price field, so a client never has to guess what a number buys. */
const TASK_PRICE_UNITS = {
  per_image: 'per_image',
  per_second: 'per_second',
  per_second_with_audio: 'per_second',
  per_reference_image: 'per_image',
  free_reference_images: 'count',
} as const satisfies Record<keyof TaskPrices, string>;

/**
 * A model's `pricing`. Token models keep the entry they always had (`unit:
 * 'per_million_tokens'` and the token fields), so existing clients read it unchanged; the chat
 * price fields (cache writes, length tiers, a per-request fee, service tiers) appear only on a
 * model that has them. Task prices come with `units`, naming the unit of each task field present
 * (per image, per second of output video, a count of free reference images).
 */
function pricingEntry(model: ModelConfig, price: PriceEntry) {
  // Parsed prices leave an absent field out (never an explicit undefined): the wire type's shape.
  const tokens = Object.fromEntries(
    TOKEN_PRICING_FIELDS.flatMap((field) =>
      price.prices[field] === undefined ? [] : [[field, price.prices[field]]],
    ),
  ) as Pick<ModelPricing, (typeof TOKEN_PRICING_FIELDS)[number]>;
  const taskFields = (Object.keys(TASK_PRICE_UNITS) as (keyof TaskPrices)[]).filter(
    (field) => price.prices[field] !== undefined,
  );
  const task = Object.fromEntries(taskFields.map((field) => [field, price.prices[field]]));
  const units = Object.fromEntries(taskFields.map((field) => [field, TASK_PRICE_UNITS[field]]));
  return {
    currency: 'CNY_MICRO' as const,
    ...(model.families.some(billsTokens) ? { unit: 'per_million_tokens' as const } : {}),
    price_version: price.priceVersion,
    ...tokens,
    ...(taskFields.length > 0 ? { units, ...task } : {}),
  };
}

/** What an image or video request may ask for, judged against today's prices. */
function taskCapabilities(model: ModelConfig, prices: ModelPrices) {
  return {
    ...(model.families.includes('images')
      ? {
          images: {
            sizes: offeredImageSizes(model, prices),
            qualities:
              model.image_qualities ??
              [...new Set(Object.values(prices.per_image ?? {}).flatMap(Object.keys))].sort(),
            max_images: model.max_images,
            max_reference_images: model.max_reference_images,
          },
        }
      : {}),
    ...(model.families.includes('videos')
      ? {
          videos: {
            sizes: offeredVideoSizes(model, prices),
            seconds: model.video_seconds,
            generate_audio: model.generate_audio,
            max_reference_images: model.max_reference_images,
          },
        }
      : {}),
  };
}
