import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';

/**
 * The official SDK with a new `Idempotency-Key` (a UUID) on every POST: each `create()`, and each
 * step of `runTools()`, is its own request. The SDK would keep the key across its own retries,
 * but a retry must not happen at all (spec 7): `maxRetries: 0`.
 */
export class TollgateOpenAI extends OpenAI {
  protected override idempotencyHeader = 'Idempotency-Key';

  protected override defaultIdempotencyKey(): string {
    return randomUUID();
  }
}

export function tollgateOpenAI(options: {
  baseURL: string; // ends with /v1
  apiKey: string; // from server-side configuration, never in a URL or browser code
  fetch?: typeof fetch;
}): TollgateOpenAI {
  return new TollgateOpenAI({ ...options, maxRetries: 0 });
}
