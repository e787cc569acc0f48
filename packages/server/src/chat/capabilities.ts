import type { Feature, ModelConfig } from '../config/schema.js';
import { ApiError } from '../errors/api-error.js';

/**
 * The features a request uses must all lie inside one enabled combination of the model. A
 * feature the model offers in no combination is 400 UNSUPPORTED_CAPABILITY; features it offers,
 * but not together, are 403 NATIVE_MODE_UNVERIFIED. Plain text needs no combination.
 */
export function checkCapabilities(model: ModelConfig, features: ReadonlySet<Feature>): void {
  if (features.size === 0) return;
  const offered = new Set(model.combinations.flat());
  const missing = [...features].filter((feature) => !offered.has(feature));
  if (missing.length > 0) {
    throw new ApiError(
      'UNSUPPORTED_CAPABILITY',
      `${model.id} does not offer ${missing.join(', ')}; GET /v1/models lists what each model offers`,
      missing[0],
    );
  }
  const fits = model.combinations.some((combination) =>
    [...features].every((feature) => combination.includes(feature)),
  );
  if (!fits) {
    throw new ApiError(
      'NATIVE_MODE_UNVERIFIED',
      `${model.id} does not offer ${[...features].sort().join(' + ')} together; its enabled combinations are listed by GET /v1/models`,
    );
  }
}
