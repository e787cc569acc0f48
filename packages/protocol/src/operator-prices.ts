/*
 * Models and their price versions as operators read and set them (docs/billing.md, "Prices";
 * docs/console.md, "The price editor"): `GET`/`PUT /admin/v1/models/{model}/prices` and the
 * console's `/console/api/admin/models…`. Prices are integer micro-yuan; times ISO 8601 strings.
 */

import type { ModelFamily } from './compat.js';

/**
 * A model's price fields as the configuration writes them (`input_per_million_tokens`, `tiers`,
 * `service_tiers`, `per_request`, the per-image, per-second and task tables, …), micro-yuan.
 * Which fields a model takes follows its families; the price book checks them, and refuses a
 * field it does not know. Also the body of `PUT …/models/{model}/prices` (with `"free": true`
 * when a price is 0; `free` is not stored).
 */
export type PriceFields = Record<string, unknown>;

/** One price version of a model: the answer of `PUT …/models/{model}/prices` (a new version). */
export interface ModelPrices {
  object: 'model_prices';
  model: string;
  /** `<model>@<n>`; never changed once written. */
  price_version: string;
  prices: PriceFields;
  created_at: string;
}

/** One version in a model's price history. */
export interface ModelPriceVersion {
  price_version: string;
  prices: PriceFields;
  created_at: string;
}

/** `GET …/models/{model}/prices`: every version of the model's prices, newest first. */
export interface ModelPriceHistory {
  object: 'list';
  data: ModelPriceVersion[];
}

/** A configured model as the operator's models page shows it (read only but its prices). */
export interface OperatorModel {
  /** The public model id. */
  id: string;
  /** The one upstream that serves it; absent for a model served by `channels` (docs/routing.md). */
  upstream?: string;
  families: ModelFamily[];
  /** Its current price version. */
  current: ModelPrices;
}

/** `GET /console/api/admin/models`: every configured model, in the configuration's order. */
export interface OperatorModelList {
  object: 'list';
  data: OperatorModel[];
}
