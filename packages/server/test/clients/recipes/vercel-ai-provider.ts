import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { withIdempotencyKeys } from './idempotent-fetch.js';

/**
 * Tollgate as an AI SDK provider: every POST (each step of a `stopWhen` tool loop included) gets
 * its own Idempotency-Key from the fetch wrapper. The AI SDK retries 409 and 5xx by default —
 * a 502 whose outcome is unknown included — so pass `maxRetries: 0` to every call as well.
 */
export function tollgateProvider(options: {
  baseURL: string; // ends with /v1
  apiKey: string; // from server-side configuration, never in a URL or browser code
  fetch?: typeof fetch;
  onKey?: (key: string, url: string) => void;
}) {
  return createOpenAICompatible({
    name: 'tollgate',
    baseURL: options.baseURL,
    apiKey: options.apiKey,
    fetch: withIdempotencyKeys(options.fetch, options.onKey),
    includeUsage: true,
    supportsStructuredOutputs: true,
  });
}
