import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';

/**
 * The same client in plain JavaScript (ESM): a new `Idempotency-Key` (a UUID) on every POST,
 * each `create()` and each step of `runTools()` its own request, and no retries (spec 7).
 */
export class TollgateOpenAI extends OpenAI {
  idempotencyHeader = 'Idempotency-Key';

  defaultIdempotencyKey() {
    return randomUUID();
  }
}

/**
 * @param {{ baseURL: string, apiKey: string, fetch?: typeof fetch }} options `baseURL` ends
 *   with /v1; `apiKey` comes from server-side configuration, never a URL or browser code.
 */
export function tollgateOpenAI(options) {
  return new TollgateOpenAI({ ...options, maxRetries: 0 });
}
