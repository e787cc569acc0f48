import { ChatOpenAI, OpenAIEmbeddings } from '@langchain/openai';
import { withIdempotencyKeys } from './idempotent-fetch.js';

interface TollgateOptions {
  baseURL: string; // ends with /v1
  apiKey: string; // from server-side configuration, never in a URL or browser code
  model: string;
  fetch?: typeof fetch;
  onKey?: (key: string, url: string) => void;
}

/**
 * LangChain's OpenAI models pointed at Tollgate. LangChain retries failed calls itself (6 times
 * by default), each through the fetch wrapper as a new request: `maxRetries: 0` is required.
 */
export function tollgateChat(options: TollgateOptions): ChatOpenAI {
  return new ChatOpenAI({
    model: options.model,
    apiKey: options.apiKey,
    maxRetries: 0,
    configuration: {
      baseURL: options.baseURL,
      fetch: withIdempotencyKeys(options.fetch, options.onKey),
    },
  });
}

export function tollgateEmbeddings(options: TollgateOptions): OpenAIEmbeddings {
  return new OpenAIEmbeddings({
    model: options.model,
    apiKey: options.apiKey,
    maxRetries: 0,
    configuration: {
      baseURL: options.baseURL,
      fetch: withIdempotencyKeys(options.fetch, options.onKey),
    },
  });
}
