import type { MessageKey } from './messages/index.js';

/**
 * What a bill's pricing rule says, in the viewer's language (issue 36, item 3). The gateway writes
 * the rule as an English sentence with its numbers (`chat: input ceil(12 x 150000 / 1e6) = 2 + …
 * = 9 micro-yuan`, `settlement of task …`, `failed: nothing charged, the hold is released`); the
 * console shows the kind of rule as a message and the sentence itself behind a disclosure
 * (components/PricingRule.tsx). The kinds are told by the sentence's first words, which the
 * gateway's writers keep (docs/billing.md); an unknown sentence is `other`, never hidden.
 * Pure (tested in test/pricing-rule.test.ts).
 */
export type RuleKind =
  | 'tokens'
  | 'inputTokens'
  | 'items'
  | 'nothingBilled'
  | 'settlement'
  | 'operator'
  | 'free'
  | 'insurance'
  | 'notCharged'
  | 'unknownOutcome'
  | 'expired'
  | 'other';

/** The kind of a rule sentence (see above); `hasItems`: the bill has line items. */
export function ruleKind(rule: string, hasItems: boolean): RuleKind {
  const text = rule.trim().replace(/^stream completed with usage;\s*/, '');
  if (/^zero_completion_insurance\b/.test(text)) return 'insurance';
  if (/^chat\b/.test(text)) return 'tokens';
  if (/^(embeddings|rerank)\b/.test(text)) return 'inputTokens';
  if (/^settlement of (task|request)\b/.test(text)) return 'settlement';
  if (/^not settled within the settlement window\b/.test(text)) return 'expired';
  if (/^(operator resolution|resolved by an operator|released by an operator)\b/.test(text))
    return 'operator';
  if (/^(assets|shares):.*\bfree\b/.test(text)) return 'free';
  if (/outcome unknown|hold kept/.test(text)) return 'unknownOutcome';
  if (/nothing charged|not charged|hold (is )?released/.test(text)) return 'notCharged';
  if (/: nothing billed\b/.test(text)) return 'nothingBilled';
  if (hasItems) return 'items';
  return 'other';
}

/** The message of a rule's kind; a rule held to a cap says so too (`capped`). */
export function ruleMessages(rule: string, hasItems: boolean): MessageKey[] {
  const kind: MessageKey = `rule.${ruleKind(rule, hasItems)}`;
  const capped = /\busage_exceeded_cap\b|: billed the\b|\bcapped at the hold\b/.test(rule);
  return capped ? [kind, 'rule.capped'] : [kind];
}
