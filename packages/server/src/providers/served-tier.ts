import { z } from 'zod';

/**
 * The tier an upstream reports it served a request on (OpenAI's top-level `service_tier`:
 * `default`, `flex`, `priority`; Anthropic's `usage.service_tier`: `standard`, `priority`,
 * `batch`), billed as served (chat/chat-prices.ts `servedServiceTier`). A value of another shape
 * is left out, as if none was reported: the base prices.
 */
export const servedTierSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,31}$/)
  .nullish()
  .catch(undefined);
