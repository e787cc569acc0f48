import type { ChatUsage } from './chat-types.js';

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
  /** Who gave the count: the upstream's usage, or the gateway counting the answer (tool calls). */
  countedBy: 'upstream reported' | 'answer made' = 'upstream reported',
): { tokens: number; note: string | undefined } {
  if (reported <= bound) return { tokens: reported, note: undefined };
  return {
    tokens: bound,
    note: `${name}: ${countedBy} ${reported}, billed the bound ${bound}`,
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

/**
 * Chat usage cut to the caps: input to its bound, output to the `max_tokens` the gateway sent.
 * The parts of each total stay within it: cache reads, then 5-minute, then 1-hour cache writes
 * within the (cut) input — a report whose parts exceed its own `prompt_tokens` (an input-side
 * inconsistency) is cut the same way and flagged — and reasoning within the (cut) output.
 */
export function credibleChatUsage(
  usage: ChatUsage,
  bounds: {
    readonly inputUpperEstimate: number;
    readonly outputCap: number;
    /** The most tool calls billed (chat-pricing.ts `heldToolCalls`); absent: no fee, no bound. */
    readonly toolCallCap?: number;
  },
): CredibleUsage<ChatUsage> {
  const input = capTokens(
    'prompt_tokens',
    usage.promptTokens,
    inputTokenBound(bounds.inputUpperEstimate),
  );
  const output = capTokens('completion_tokens', usage.completionTokens, bounds.outputCap);
  const [cachedTokens = 0, cacheWrite = 0, cacheWrite1h = 0] = withinTotal(input.tokens, [
    usage.cachedTokens,
    usage.cacheWriteTokens ?? 0,
    usage.cacheWrite1hTokens ?? 0,
  ]);
  const parts =
    usage.cachedTokens + (usage.cacheWriteTokens ?? 0) + (usage.cacheWrite1hTokens ?? 0);
  const inconsistent =
    parts > usage.promptTokens
      ? `cache reads and writes: upstream reported ${parts}, above its prompt_tokens ${usage.promptTokens} (input-side inconsistency), billed within prompt_tokens`
      : undefined;
  const reasoningTokens = Math.min(usage.reasoningTokens, output.tokens);
  const toolCalls =
    usage.toolCalls === undefined || bounds.toolCallCap === undefined
      ? { tokens: usage.toolCalls, note: undefined }
      : capTokens('tool_calls', usage.toolCalls, bounds.toolCallCap, 'answer made');
  // Audio and image parts within the (cut) totals too: input ones within all of the input (they
  // may overlap cache reads), output ones within what reasoning leaves.
  const [audioIn = 0, imageIn = 0] = withinTotal(input.tokens, [
    usage.audioInputTokens ?? 0,
    usage.imageInputTokens ?? 0,
  ]);
  const [audioOut = 0, imageOut = 0] = withinTotal(output.tokens - reasoningTokens, [
    usage.audioOutputTokens ?? 0,
    usage.imageOutputTokens ?? 0,
  ]);
  return {
    billed: {
      promptTokens: input.tokens,
      cachedTokens,
      completionTokens: output.tokens,
      reasoningTokens,
      ...(usage.cacheWriteTokens === undefined ? {} : { cacheWriteTokens: cacheWrite }),
      ...(usage.cacheWrite1hTokens === undefined ? {} : { cacheWrite1hTokens: cacheWrite1h }),
      ...(toolCalls.tokens === undefined || toolCalls.tokens === 0
        ? {}
        : { toolCalls: toolCalls.tokens }),
      ...(usage.audioInputTokens === undefined ? {} : { audioInputTokens: audioIn }),
      ...(usage.imageInputTokens === undefined ? {} : { imageInputTokens: imageIn }),
      ...(usage.audioOutputTokens === undefined ? {} : { audioOutputTokens: audioOut }),
      ...(usage.imageOutputTokens === undefined ? {} : { imageOutputTokens: imageOut }),
      ...(usage.serviceTier === undefined ? {} : { serviceTier: usage.serviceTier }),
    },
    flag: flagOf([input.note, inconsistent, output.note, toolCalls.note]),
  };
}

/** `parts` in order, each cut to what the earlier ones left of `total`. */
function withinTotal(total: number, parts: readonly number[]): number[] {
  let left = total;
  return parts.map((part) => {
    const kept = Math.min(part, left);
    left -= kept;
    return kept;
  });
}
