/**
 * The query string of a listing paged by `limit` and `after` (shares, assets): those two, plus
 * the listing's own filters, and nothing else. An unknown parameter is 400 `INVALID_INPUT`
 * naming it, as on every other listing (`GET /v1/requests`, usage), rather than ignored: a
 * misspelt filter must not silently list everything. The values are judged by the listing.
 */
export function pageQuerySchema(filters: readonly string[] = []) {
  const properties: Record<string, { type: 'string' }> = {
    limit: { type: 'string' },
    after: { type: 'string' },
  };
  for (const filter of filters) properties[filter] = { type: 'string' };
  return { type: 'object', additionalProperties: false, properties } as const;
}
