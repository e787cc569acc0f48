import { z } from 'zod';
import { servedServiceTier } from '../chat/chat-prices.js';
import type { ChatUsage } from '../chat/chat-types.js';

/**
 * The tier an upstream reports it served a request on (OpenAI's top-level `service_tier`:
 * `default`, `flex`, `priority`, on a chat completion and on a Responses response object alike;
 * Anthropic's `usage.service_tier`: `standard`, `priority`,
 * `batch`), billed as served (chat/chat-prices.ts `servedServiceTier`). A value of another shape
 * is left out, as if none was reported: the base prices.
 */
export const servedTierSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,31}$/)
  .nullish()
  .catch(undefined);

/**
 * The usage with the tier the upstream served it on, when that is not its standard tier (an
 * OpenAI-compatible answer's `service_tier`, a Responses response object's).
 */
export function withServedTier(usage: ChatUsage, reported: string | null | undefined): ChatUsage {
  const serviceTier = servedServiceTier(reported);
  return serviceTier === undefined ? usage : { ...usage, serviceTier };
}
