import type { ModelPrices } from '../config/schema.js';
import type { PriceEntry } from './price-book.js';

/**
 * Prices as operators read them, from the admin API and the CLI alike (docs/api-conventions.md:
 * one shape per resource, whatever prints it): snake_case, ISO 8601 times, lists in the list
 * object.
 */
export interface ModelPricesView {
  readonly object: 'model_prices';
  readonly model: string;
  readonly price_version: string;
  readonly prices: ModelPrices;
  readonly created_at: string;
}

/** One model's current prices, as a price change answers it. */
export function modelPricesView(entry: PriceEntry): ModelPricesView {
  return {
    object: 'model_prices',
    model: entry.model,
    price_version: entry.priceVersion,
    prices: entry.prices,
    created_at: new Date(entry.createdAt).toISOString(),
  };
}

/** Every price version of one model, newest first. */
export function priceHistoryView(entries: readonly PriceEntry[]): {
  readonly object: 'list';
  readonly data: { price_version: string; prices: ModelPrices; created_at: string }[];
} {
  return {
    object: 'list',
    data: entries.map((entry) => ({
      price_version: entry.priceVersion,
      prices: entry.prices,
      created_at: new Date(entry.createdAt).toISOString(),
    })),
  };
}
