/**
 * Zero-completion insurance (docs/billing.md): a chat answer that produced no output and ended
 * in an upstream fault or without a finish reason is not charged. The gateway carries whatever
 * the upstream may bill for such an answer; the caller, who received nothing, pays nothing.
 * On by default, per model (`models[].zero_completion_insurance`).
 */

/** How an insured ending is named on the record (`bill.pricing_rule` or `ending_rule`). */
export const ZERO_COMPLETION_RULE = 'zero_completion_insurance';

/** What the gateway saw of an answer. */
export interface AnswerSeen {
  /** Any content, reasoning or tool call reached the caller. */
  readonly producedOutput: boolean;
  /** The upstream's finish reason, or null when none came. */
  readonly finishReason: string | null;
  /** The completion tokens the upstream reported, when it reported usage. */
  readonly completionTokens: number | undefined;
}

/**
 * A stream that ended in an upstream fault (error event, dropped connection, stall, an
 * unverifiable chunk, `[DONE]` without usage) before any output: insured. A caller's own
 * disconnect is not an upstream fault and is never insured.
 */
export function insuresFault(insured: boolean, seen: AnswerSeen): boolean {
  return insured && !seen.producedOutput && (seen.completionTokens ?? 0) === 0;
}

/** A complete answer (usage reported) with no output tokens and no finish reason: insured. */
export function insuresAnswer(insured: boolean, seen: AnswerSeen): boolean {
  return insured && seen.completionTokens === 0 && seen.finishReason === null;
}
