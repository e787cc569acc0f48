import { z } from 'zod';
import { ApiError, invalidInput } from '../errors/api-error.js';
import { jsonSchemaOf, parseInput, type Unparsed } from '../errors/input-schema.js';
import type { ShareState } from '../store/schema.js';

/** What a share is asked for: a task (its first output) or an asset, exactly one. */
export type ShareTarget = { readonly kind: 'task' | 'asset'; readonly id: string };

const id = z.string().min(1).max(64).optional();

/** `POST /v1/shares`: `task_id` or `asset_id` and nothing else (the one-of rule is `parseShareBody`'s). */
const shareBody = z.strictObject({ task_id: id, asset_id: id });
export const shareBodySchema = jsonSchemaOf(shareBody);
export type ShareBody = z.output<typeof shareBody>;

/** The schema-checked body as a target: exactly one of the two ids. */
export function parseShareBody(body: ShareBody): ShareTarget {
  if (body.task_id !== undefined && body.asset_id !== undefined)
    throw invalidInput('task_id', 'send exactly one of task_id and asset_id, not both');
  if (body.task_id !== undefined) return { kind: 'task', id: body.task_id };
  if (body.asset_id !== undefined) return { kind: 'asset', id: body.asset_id };
  throw invalidInput('task_id', 'send exactly one of task_id and asset_id');
}

export const SHARE_STATES = [
  'pending_review',
  'approved',
  'rejected',
  'revoked',
] as const satisfies readonly ShareState[];

/** The review queue's filter (query string, CLI flag): one state, or every share. */
export const reviewFilter = z.object({
  state: z.enum(SHARE_STATES, { error: `must be one of ${SHARE_STATES.join(', ')}` }).optional(),
});

const MAX_REASON_LENGTH = 1_000;
const NOT_A_REASON = `must be 1 to ${MAX_REASON_LENGTH} characters of text, not only blanks, no control characters`;

/**
 * An operator's decision on a share: its reason, 1 to 1,000 characters, not only blanks, no
 * control character but line breaks and tabs; absent or `null` is none.
 */
const decisionInput = z.object({
  reason: z
    .string({ error: NOT_A_REASON })
    .max(MAX_REASON_LENGTH, { error: NOT_A_REASON })
    .refine((reason) => reason.trim() !== '' && ![...reason].some(isControlCharacter), {
      error: NOT_A_REASON,
    })
    .nullish()
    .transform((reason) => reason ?? null),
});
export type DecisionInput = Unparsed<typeof decisionInput>;

/**
 * A decision's reason. Required to reject or revoke (someone will ask why), optional to approve:
 * which is the decision's rule, and its 400 says why in words of its own.
 */
export function parseDecision(input: DecisionInput, required: boolean): string | null {
  const { reason } = parseInput(decisionInput, input);
  if (reason === null && required)
    throw new ApiError(
      'INVALID_INPUT',
      'reason is required: say why (it is journalled and shown to the share owner)',
      'reason',
    );
  return reason;
}

/** C0 (but tab, line feed, carriage return), DEL and C1: nothing a reason needs, much a log abuses. */
function isControlCharacter(character: string): boolean {
  const code = character.charCodeAt(0);
  if (character === '\t' || character === '\n' || character === '\r') return false;
  return code < 0x20 || (code >= 0x7f && code <= 0x9f);
}
