import type { ConfigPriceStanding } from './price-book.js';

/** A model whose configured prices a start left alone, and what to tell the operator. */
export interface PriceWarning {
  readonly model: string;
  readonly message: string;
}

/**
 * The start-up warnings: a start never changes a stored price version, so a configuration whose
 * prices differ from the current version is named, with what would apply it (or why it will not).
 */
export function pricesOutOfSync(standings: readonly ConfigPriceStanding[]): PriceWarning[] {
  const warnings: PriceWarning[] = [];
  for (const standing of standings) {
    if (standing.state === 'new')
      warnings.push({
        model: standing.model,
        message:
          `${standing.model}: the configuration's prices differ from the current version ` +
          `${standing.current}, which stays current; tollgate prices sync applies them`,
      });
    else if (standing.state === 'older')
      warnings.push({
        model: standing.model,
        message:
          `${standing.model}: the configuration's prices are those of ${standing.older}, older ` +
          `than the current ${standing.current}, which stays current (an older configuration?); ` +
          'tollgate prices sync refuses to go back without --force',
      });
  }
  return warnings;
}
