import type { ModelConfig } from '../config/schema.js';
import { invalidInput } from '../errors/api-error.js';

/**
 * The `max_input_bytes` rule, one wording for every family that reads text (embeddings, rerank,
 * chat): more UTF-8 bytes of text than the model accepts is 400 `INVALID_INPUT` naming `param`,
 * before anything is held. Each family says which bytes it counts (docs/chat.md for chat).
 */
export function checkInputBytes(model: ModelConfig, bytes: number, param: string): void {
  if (bytes > model.max_input_bytes)
    throw invalidInput(
      param,
      `is larger than ${model.max_input_bytes} bytes, the most ${model.id} accepts (${bytes} bytes of text)`,
    );
}
