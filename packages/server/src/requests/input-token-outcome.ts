import type { BillLineItem } from '@tollgate/protocol';
import type { Outcome } from './request-service.js';
import type { RoutedCall } from '../routing/channel-router.js';
import { credibleInputTokens, ruleWithFlag } from '../chat/credible-usage.js';
import { costPerMillion } from '../billing/money.js';

/**
 * The succeeded outcome of a request billed per million input tokens (embeddings, rerank): the
 * upstream's reported count, bounded by the worst case the gateway held for (a count beyond it
 * is billed at the bound and flagged, credible-usage.ts), at the model's price; and the serving
 * channel's own price on the count as reported, for the operator.
 */
export function inputTokenOutcome(billing: {
  /** Names the rule: `embeddings`, `rerank`. */
  readonly family: string;
  /** The usage field the count came in: `prompt_tokens`, `total_tokens`. */
  readonly field: string;
  readonly reportedTokens: number;
  readonly worstCaseTokens: number;
  readonly perMillion: number;
  readonly routing: RoutedCall;
  readonly usage: Record<string, number>;
  readonly upstreamRequestId: string | null;
  readonly body: unknown;
}): Outcome {
  const { family, field, reportedTokens, perMillion } = billing;
  const billed = credibleInputTokens(field, reportedTokens, billing.worstCaseTokens);
  const amount = costPerMillion(billed.tokens, perMillion);
  const flag = billed.flag;
  return {
    kind: 'succeeded',
    amount,
    lineItems: inputLineItems(billed.tokens, perMillion),
    channelCost: billing.routing.costOf((prices) =>
      costPerMillion(reportedTokens, prices.input_per_million_tokens ?? 0),
    ),
    pricingRule: ruleWithFlag(
      `${family}: ceil(${field} ${billed.tokens} x ${perMillion} / 1e6) = ${amount} micro-yuan`,
      flag,
    ),
    ...(flag === undefined ? {} : { usageFlag: flag }),
    usage: billing.usage,
    upstreamRequestId: billing.upstreamRequestId,
    body: billing.body,
  };
}

/**
 * The bill of `tokens` input tokens at `perMillion` as line items (embeddings, rerank): one
 * `input` item, none for 0 tokens (as chat leaves out an item of 0 units).
 */
export function inputLineItems(tokens: number, perMillion: number): BillLineItem[] {
  if (tokens === 0) return [];
  const amount = costPerMillion(tokens, perMillion);
  return [{ item: 'input', units: tokens, price_per_million: perMillion, amount }];
}
