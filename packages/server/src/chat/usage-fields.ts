import type { ChatUsage } from './chat-types.js';

/**
 * A chat's measured usage as its request record keeps it (the `usage` object of the record and
 * of `GET /v1/requests/{id}`): written by the streamed and plain chat paths and by the
 * reconciler's looked-up usage, so it lives below all three.
 */
export function usageFields(usage: ChatUsage): Record<string, number> {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    cached_tokens: usage.cachedTokens,
    reasoning_tokens: usage.reasoningTokens,
    ...(usage.cacheWriteTokens === undefined ? {} : { cache_write_tokens: usage.cacheWriteTokens }),
    ...(usage.cacheWrite1hTokens === undefined
      ? {}
      : { cache_write_1h_tokens: usage.cacheWrite1hTokens }),
    ...(usage.toolCalls === undefined ? {} : { tool_calls: usage.toolCalls }),
    ...(usage.audioInputTokens === undefined ? {} : { audio_input_tokens: usage.audioInputTokens }),
    ...(usage.imageInputTokens === undefined ? {} : { image_input_tokens: usage.imageInputTokens }),
    ...(usage.audioOutputTokens === undefined
      ? {}
      : { audio_output_tokens: usage.audioOutputTokens }),
    ...(usage.imageOutputTokens === undefined
      ? {}
      : { image_output_tokens: usage.imageOutputTokens }),
  };
}

/**
 * A chat's usage in OpenAI's shape (`usage` of a chat completion and of its last chunk): what the
 * chat-completions dialect answers, and what the Responses and Anthropic adapters hand the chat
 * turn in place of an OpenAI upstream's own usage object.
 */
export function openAiUsage(usage: ChatUsage) {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: {
      cached_tokens: usage.cachedTokens,
      ...(usage.audioInputTokens === undefined ? {} : { audio_tokens: usage.audioInputTokens }),
      ...(usage.imageInputTokens === undefined ? {} : { image_tokens: usage.imageInputTokens }),
    },
    completion_tokens_details: {
      reasoning_tokens: usage.reasoningTokens,
      ...(usage.audioOutputTokens === undefined ? {} : { audio_tokens: usage.audioOutputTokens }),
      ...(usage.imageOutputTokens === undefined ? {} : { image_tokens: usage.imageOutputTokens }),
    },
  };
}
