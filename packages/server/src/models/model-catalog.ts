import type { Principal } from '../auth/key-service.js';
import type { PriceBook } from '../billing/price-book.js';
import type { Family, ModelConfig } from '../config/schema.js';
import { ApiError } from '../errors/api-error.js';

/** The configured models, filtered by what a key may call. */
export class ModelCatalog {
  private readonly byId: ReadonlyMap<string, ModelConfig>;

  constructor(
    readonly models: readonly ModelConfig[],
    private readonly prices: PriceBook,
    private readonly createdAt: number,
  ) {
    this.byId = new Map(models.map((model) => [model.id, model]));
  }

  callableBy(principal: Principal): ModelConfig[] {
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
  async list(principal: Principal) {
    const models = this.callableBy(principal);
    return Promise.all(
      models.map(async (model) => {
        const price = await this.prices.currentFor(model.id);
        return {
          id: model.id,
          object: 'model' as const,
          created: Math.floor(this.createdAt / 1000),
          owned_by: model.owned_by,
          capabilities: {
            families: model.families,
            ...(model.families.includes('chat') ? { combinations: model.combinations } : {}),
          },
          pricing: {
            currency: 'CNY_MICRO' as const,
            unit: 'per_million_tokens' as const,
            price_version: price.priceVersion,
            ...price.prices,
          },
        };
      }),
    );
  }
}
