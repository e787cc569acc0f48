import type { ChatUsage } from '../chat/chat-types.js';

/**
 * Usage an upstream reports is billed only up to what the gateway allowed it to use (see
 * docs/billing.md, "Usage beyond the cap"):
 * - output: the cap the gateway sent (`max_tokens`); an upstream cannot honestly produce more;
 * - input: `CREDIBLE_INPUT_FACTOR` times the gateway's own upper estimate (UTF-8 bytes plus
 *   per-text overhead, configured tokens per image or video). Real tokenizers stay below the
 *   estimate; the factor leaves room for a configured per-image figure that is too low.
 * Beyond the bound the bound is billed, and the record is flagged for an operator to review.
 */
export const CREDIBLE_INPUT_FACTOR = 2;

export interface CredibleUsage<Usage> {
  /** The usage to price: the report, each count cut to its bound. */
  readonly billed: Usage;
  /** What was cut and why; undefined when the report was credible. */
  readonly flag: string | undefined;
}

/** One count against its bound: the count to bill and, when cut, a note for the flag. */
export function capTokens(
  name: string,
  reported: number,
  bound: number,
): { tokens: number; note: string | undefined } {
  if (reported <= bound) return { tokens: reported, note: undefined };
  return {
    tokens: bound,
    note: `${name}: upstream reported ${reported}, billed the bound ${bound}`,
  };
}

/** The input-token bound for a request the gateway estimated at `upperEstimate` tokens. */
export function inputTokenBound(upperEstimate: number): number {
  return upperEstimate * CREDIBLE_INPUT_FACTOR;
}

/** Input tokens of embeddings or rerank cut to their bound, with the record's flag when cut. */
export function credibleInputTokens(
  name: string,
  reported: number,
  upperEstimate: number,
): { tokens: number; flag: string | undefined } {
  const capped = capTokens(name, reported, inputTokenBound(upperEstimate));
  return { tokens: capped.tokens, flag: flagOf([capped.note]) };
}

/** A pricing rule that also says what was cut, so the record explains its bill. */
export function ruleWithFlag(rule: string, flag: string | undefined): string {
  return flag === undefined ? rule : `${rule} (${flag})`;
}

function flagOf(notes: readonly (string | undefined)[]): string | undefined {
  const present = notes.filter((note) => note !== undefined);
  return present.length === 0 ? undefined : `usage_exceeded_cap: ${present.join('; ')}`;
}

/** Chat usage cut to the caps: input to its bound, output to the `max_tokens` the gateway sent. */
export function credibleChatUsage(
  usage: ChatUsage,
  bounds: { readonly inputUpperEstimate: number; readonly outputCap: number },
): CredibleUsage<ChatUsage> {
  const input = capTokens(
    'prompt_tokens',
    usage.promptTokens,
    inputTokenBound(bounds.inputUpperEstimate),
  );
  const output = capTokens('completion_tokens', usage.completionTokens, bounds.outputCap);
  return {
    billed: {
      promptTokens: input.tokens,
      cachedTokens: Math.min(usage.cachedTokens, input.tokens),
      completionTokens: output.tokens,
      reasoningTokens: Math.min(usage.reasoningTokens, output.tokens),
    },
    flag: flagOf([input.note, output.note]),
  };
}
