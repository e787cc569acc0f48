import type { RequestOptions } from '../http.js';
import type { CallOptions, PostOptions } from '../types.js';

/** The timeout and signal of a call, as request options (absent ones left out). */
export function callOptions(options: CallOptions): Pick<RequestOptions, 'timeoutMs' | 'signal'> {
  return {
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
}

/** A business POST's request options: journaled, with its `Idempotency-Key`. */
export function businessOptions(
  options: PostOptions,
  jobKey?: string,
): Pick<RequestOptions, 'timeoutMs' | 'signal' | 'business'> {
  return {
    ...callOptions(options),
    business: {
      ...(options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey }),
      ...(jobKey === undefined ? {} : { jobKey }),
    },
  };
}

/** Percent-encodes an id for a path segment. */
export function segment(id: string): string {
  return encodeURIComponent(id);
}
