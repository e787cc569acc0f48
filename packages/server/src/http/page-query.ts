import { z } from 'zod';
import { jsonSchemaOf } from '../errors/input-schema.js';

/**
 * The query string of a listing paged by `limit` and `after` (shares, assets): those two, plus
 * the listing's own filters, and nothing else. An unknown parameter is 400 `INVALID_INPUT`
 * naming it, as on every other listing (`GET /v1/requests`, usage), rather than ignored: a
 * misspelt filter must not silently list everything. The values are judged by the listing.
 */
export function pageQuery<const Filter extends string = never>(filters: readonly Filter[] = []) {
  const filtered = Object.fromEntries(filters.map((filter) => [filter, z.string().optional()]));
  return z.strictObject({
    limit: z.string().optional(),
    after: z.string().optional(),
    ...(filtered as Record<Filter, z.ZodOptional<z.ZodString>>),
  });
}

/** The query string as the schema lets it through. */
export type PageQueryString<Filter extends string = never> = z.output<
  ReturnType<typeof pageQuery<Filter>>
>;

/** The route's schema, checked by Ajv before the handler runs (and documented). */
export function pageQuerySchema(filters: readonly string[] = []): Record<string, unknown> {
  return jsonSchemaOf(pageQuery(filters));
}
