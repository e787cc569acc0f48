import { TOKEN_PRICE_FIELDS } from '../config/price-rules.js';
import { STANDARD_SERVICE_TIERS } from '../config/price-schema.js';
import type { TokenPrices } from '../config/schema.js';

/**
 * Which per-million prices a chat request is billed at (docs/billing.md, "Chat prices"): one
 * price table — the base prices, or the `service_tiers` table of the service tier the upstream
 * served — and within it the whole request at the highest length tier its input is above. The
 * capture (`chatPricesFor`) and the hold (`reachableChatPrices`) both read this one rule.
 */

/** The per-million prices a chat usage is billed at, every default applied. */
export interface ChatTokenPrices {
  readonly input: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  readonly cacheWrite1h: number;
  readonly output: number;
  readonly reasoning: number;
  /**
   * Audio and image tokens' own prices; `undefined` where the table gives none: those tokens are
   * then billed as input or output, in its line item (so a bill of a model that prices no
   * modality apart is the same as before these prices existed, to the micro-yuan).
   */
  readonly audioInput: number | undefined;
  readonly imageInput: number | undefined;
  readonly audioOutput: number | undefined;
  readonly imageOutput: number | undefined;
}

type Tier = NonNullable<TokenPrices['tiers']>[number];
/** The per-million fields of a price table (the base, a tier's `prices`, a service tier). */
type TableFields = { readonly [Field in keyof Tier['prices']]?: number | undefined };
/** A price table: its fields and its own length tiers. */
interface PriceTable extends TableFields {
  readonly tiers?: readonly Tier[] | undefined;
}

/** The prices a request is billed at, and what chose them (for the pricing rule). */
export interface ResolvedChatPrices {
  readonly prices: ChatTokenPrices;
  /** `service tier flex`, `tier above 200000 input tokens`; empty for the base prices. */
  readonly basis: readonly string[];
}

/**
 * The prices of a request of `inputTokens` input tokens (cache reads and writes included) that
 * the upstream served on `serviceTier`. A tier applies when the input is strictly above its
 * `above_input_tokens`: 200 000 tokens are not above 200 000.
 */
export function chatPricesFor(
  prices: TokenPrices,
  inputTokens: number,
  serviceTier?: string,
): ResolvedChatPrices {
  const basis: string[] = [];
  const own = serviceTier === undefined ? undefined : prices.service_tiers?.[serviceTier];
  if (serviceTier !== undefined)
    basis.push(
      own === undefined
        ? `service tier ${serviceTier} (no prices of its own: the base prices)`
        : `service tier ${serviceTier}`,
    );
  const table = own === undefined ? prices : serviceTable(prices, own);
  const tier = table.tiers?.findLast((candidate) => inputTokens > candidate.above_input_tokens);
  if (tier !== undefined) basis.push(`tier above ${tier.above_input_tokens} input tokens`);
  return { prices: tierPrices(table, tier), basis };
}

/**
 * Every set of prices a request of at most `maxInputTokens` input tokens could be billed at:
 * in every table (the base and each service tier, as the upstream may serve another tier than
 * asked), the table's own prices and each tier whose threshold is below `maxInputTokens`.
 */
export function reachableChatPrices(
  prices: TokenPrices,
  maxInputTokens: number,
): ChatTokenPrices[] {
  const tables: PriceTable[] = [
    prices,
    ...Object.values(prices.service_tiers ?? {}).map((own) => serviceTable(prices, own)),
  ];
  return tables.flatMap((table) => [
    tierPrices(table, undefined),
    ...(table.tiers ?? [])
      .filter((tier) => tier.above_input_tokens < maxInputTokens)
      .map((tier) => tierPrices(table, tier)),
  ]);
}

/** A service tier's table: its fields over the base's, and only its own length tiers. */
function serviceTable(base: TableFields, own: PriceTable): PriceTable {
  const fields: TableFields = Object.fromEntries(
    TOKEN_PRICE_FIELDS.map((field) => [field, own[field] ?? base[field]]),
  );
  return { ...fields, tiers: own.tiers };
}

/**
 * A table's prices, at `tier` when given: the tier's fields over the table's, then the defaults
 * (cache reads and writes at the input price, reasoning at the output price) on what is left, so
 * a tier that raises only the input price raises its defaulted cache prices with it.
 */
function tierPrices(table: TableFields, tier: Tier | undefined): ChatTokenPrices {
  const own = tier?.prices ?? {};
  const input = own.input_per_million_tokens ?? table.input_per_million_tokens ?? 0;
  const output = own.output_per_million_tokens ?? table.output_per_million_tokens ?? 0;
  return {
    input,
    cacheRead:
      own.cached_input_per_million_tokens ?? table.cached_input_per_million_tokens ?? input,
    cacheWrite: own.cache_write_per_million_tokens ?? table.cache_write_per_million_tokens ?? input,
    cacheWrite1h:
      own.cache_write_1h_per_million_tokens ?? table.cache_write_1h_per_million_tokens ?? input,
    output,
    reasoning: own.reasoning_per_million_tokens ?? table.reasoning_per_million_tokens ?? output,
    audioInput: own.audio_input_per_million_tokens ?? table.audio_input_per_million_tokens,
    imageInput: own.image_input_per_million_tokens ?? table.image_input_per_million_tokens,
    audioOutput: own.audio_output_per_million_tokens ?? table.audio_output_per_million_tokens,
    imageOutput: own.image_output_per_million_tokens ?? table.image_output_per_million_tokens,
  };
}

/**
 * The tier an upstream reports it served a request on, as the usage record keeps it
 * (`ChatUsage.serviceTier`): `undefined` when it reported none, or its standard tier.
 */
export function servedServiceTier(reported: string | null | undefined): string | undefined {
  if (reported === null || reported === undefined) return undefined;
  return STANDARD_SERVICE_TIERS.includes(reported) ? undefined : reported;
}
