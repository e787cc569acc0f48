import { describe, expect, it } from 'vitest';
import { ruleKind, ruleMessages } from '../src/pricing-rule.js';

/**
 * A pricing rule's kind (src/pricing-rule.ts): the message the console shows in the viewer's
 * language, the gateway's English sentence behind a disclosure. Each sentence below is one the
 * gateway writes (chat/chat-pricing.ts, requests/, tasks/, http/streamed-chat.ts, …).
 */
describe('ruleKind: each rule the gateway writes has its message', () => {
  it.each([
    [
      'chat: input ceil(12 x 150000 / 1e6) = 2 + output ceil(9 x 600000 / 1e6) = 6 = 8 micro-yuan',
      true,
      'tokens',
    ],
    ['chat (service tier flex): no tokens = 0 micro-yuan', false, 'tokens'],
    [
      'stream completed with usage; chat: input ceil(1 x 1 / 1e6) = 1 = 1 micro-yuan',
      true,
      'tokens',
    ],
    ['embeddings: ceil(prompt_tokens 3 x 20000 / 1e6) = 1 micro-yuan', true, 'inputTokens'],
    ['rerank: ceil(total_tokens 30 x 20000 / 1e6) = 1 micro-yuan', true, 'inputTokens'],
    ['image sim-image: image 1 x 10000 = 10000 micro-yuan', true, 'items'],
    ['image sim-image: nothing billed', false, 'nothingBilled'],
    ["settlement of task task_1: 10000 micro-yuan charged on the task's hold", false, 'settlement'],
    ['settlement of request req_1: 5 micro-yuan charged on its hold', false, 'settlement'],
    ['operator resolution', false, 'operator'],
    ['resolved by an operator: the hold is released', false, 'operator'],
    ['released by an operator while it awaited settlement: nothing charged', false, 'operator'],
    ['assets: uploads are free', false, 'free'],
    ['shares: free', false, 'free'],
    [
      'zero_completion_insurance: no output tokens and no finish reason; not charged',
      false,
      'insurance',
    ],
    [
      'stream dropped after 3 chunk(s): outcome unknown, hold kept (submission_unknown)',
      false,
      'unknownOutcome',
    ],
    ['stream: upstream error before any chunk: hold released', false, 'notCharged'],
    ['failed: nothing charged, the hold is released', false, 'notCharged'],
    [
      'not settled within the settlement window: nothing charged, the hold is released',
      false,
      'expired',
    ],
    ['something new the console does not know', false, 'other'],
  ] as const)('%j → %s', (rule, hasItems, kind) => {
    expect(ruleKind(rule, hasItems)).toBe(kind);
  });

  it('a bill held to the cap says so beside its kind', () => {
    expect(
      ruleMessages('chat: … = 9 micro-yuan (usage_exceeded_cap: output 100005 above 5)', true),
    ).toEqual(['rule.tokens', 'rule.capped']);
    expect(
      ruleMessages('image sim-image (more than the quote: billed the quote): …', true),
    ).toEqual(['rule.items', 'rule.capped']);
    expect(ruleMessages('shares: free', false)).toEqual(['rule.free']);
  });
});
