import type { ApiKey, ConsoleModel, ConsoleModelList, H3ModelPricing } from '@tollgate/protocol';
import type { FastifyInstance } from 'fastify';
import type { PriceBook } from '../../billing/price-book.js';
import { H3_FREE_REFERENCE_IMAGES } from '../../config/price-rules.js';
import { h3ResolutionSchema } from '../../config/price-schema.js';
import type { ModelPrices } from '../../config/schema.js';
import { memberAccountOf } from './console-auth.js';
import type { ConsoleDeps } from './console-deps.js';

/**
 * The member's models page (docs/console.md, "Models page"): every model the account's keys may
 * call, as `GET /v1/models` lists it for such a key (the catalog's own entries: capabilities,
 * families, combinations, the current prices and their version), plus an H3 model's per-second
 * prices of that very price version.
 */
export function registerCallerModelRoutes(scope: FastifyInstance, deps: ConsoleDeps): void {
  scope.get('/console/api/models/callable', async (request): Promise<ConsoleModelList> => {
    const reach = keysReach(await deps.keys.list(memberAccountOf(request)), deps.clock.now());
    const listed = await deps.catalog.list({ models: reach.models });
    const data = await Promise.all(listed.map((model) => withH3Pricing(deps.prices, model)));
    return { object: 'list', basis: reach.basis, data };
  });
}

/**
 * What the account's keys may call together: a key the gateway would still take (not disabled,
 * not expired: KeyService.authenticate's rule) adds its allowlist, and one without an allowlist
 * opens every model (`models: null`, as for `GET /v1/models`). With no such key the page shows
 * what a new key may be allowed (every model), and says so (`basis: new_key`).
 */
export function keysReach(
  keys: readonly Pick<ApiKey, 'models' | 'disabled_at' | 'expires_at'>[],
  now: number,
): { basis: ConsoleModelList['basis']; models: readonly string[] | null } {
  const usable = keys.filter(
    (key) =>
      key.disabled_at === null && (key.expires_at === null || Date.parse(key.expires_at) > now),
  );
  if (usable.length === 0) return { basis: 'new_key', models: null };
  if (usable.some((key) => key.models === null)) return { basis: 'keys', models: null };
  return { basis: 'keys', models: [...new Set(usable.flatMap((key) => key.models ?? []))] };
}

/** An H3 model's video-action prices, read from the version its listed `pricing` names. */
async function withH3Pricing(prices: PriceBook, model: ConsoleModel): Promise<ConsoleModel> {
  if (!model.capabilities.families.includes('h3')) return model;
  const entry = await prices.byVersion(model.pricing.price_version);
  if (entry === undefined) return model;
  return { ...model, h3_pricing: h3PricingOf(entry.prices) };
}

function h3PricingOf(prices: ModelPrices): H3ModelPricing {
  // The resolutions in the spec's order (the schema's), whatever order the price row has.
  const ordered = (table: ModelPrices['h3_per_second']) =>
    table === undefined
      ? undefined
      : Object.fromEntries(
          h3ResolutionSchema.options
            .filter((resolution) => table[resolution] !== undefined)
            .map((resolution) => [resolution, table[resolution]]),
        );
  const perSecond = ordered(prices.h3_per_second);
  const withAudio = ordered(prices.h3_per_second_with_audio);
  return {
    ...(perSecond === undefined ? {} : { h3_per_second: perSecond }),
    ...(withAudio === undefined ? {} : { h3_per_second_with_audio: withAudio }),
    free_reference_images: prices.free_reference_images ?? H3_FREE_REFERENCE_IMAGES,
  };
}
