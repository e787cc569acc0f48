import { createHash } from 'node:crypto';
import type { Directives } from './directives.js';
import { SIMULATOR_LIMITS } from './limits.js';
import { countTokens, words } from './tokens.js';

export class BadRequest extends Error {
  override readonly name = 'BadRequest';
}

/**
 * Deterministic embeddings by feature hashing: each lower-cased word adds ±1 to one of
 * `dimensions` buckets (bucket and sign from SHA-256 of the word), and the vector is
 * L2-normalised. Texts sharing words point in similar directions. A text with no words gets a
 * unit vector derived from its own hash.
 */
export function embed(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const word of words(text)) {
    const digest = createHash('sha256').update(word).digest();
    const bucket = digest.readUInt32LE(0) % dimensions;
    vector[bucket] = (vector[bucket] ?? 0) + (digest[4] !== undefined && digest[4] & 1 ? 1 : -1);
  }
  let norm = Math.hypot(...vector);
  if (norm === 0) {
    const digest = createHash('sha256').update(`empty:${text}`).digest();
    vector[digest.readUInt32LE(0) % dimensions] = 1;
    norm = 1;
  }
  return vector.map((value) => value / norm);
}

export interface EmbeddingsInput {
  model: string;
  texts: string[];
  dimensions: number;
  base64: boolean;
}

export function parseEmbeddingsBody(body: unknown): EmbeddingsInput {
  if (typeof body !== 'object' || body === null) throw new BadRequest('body must be a JSON object');
  const { model, input, dimensions, encoding_format: encoding } = body as Record<string, unknown>;
  if (typeof model !== 'string' || model === '') throw new BadRequest('model is required');
  // OpenAI's forms: a text, texts, one token list, token lists. A token list reads as its ids.
  const listed = typeof input === 'string' || isTokenList(input) ? [input] : input;
  if (!Array.isArray(listed) || listed.length === 0)
    throw new BadRequest('input must be a string, a non-empty array of strings, or token lists');
  const texts = listed.map((item: unknown) => {
    if (typeof item === 'string') return item;
    if (isTokenList(item)) return item.join(' ');
    throw new BadRequest('input must be a string, a non-empty array of strings, or token lists');
  });
  if (texts.length > SIMULATOR_LIMITS.embeddingInputs)
    throw new BadRequest(`input must hold at most ${SIMULATOR_LIMITS.embeddingInputs} strings`);
  const size = dimensions ?? 256;
  const most = SIMULATOR_LIMITS.embeddingDimensions;
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > most)
    throw new BadRequest(`dimensions must be an integer from 1 to ${most}`);
  // The answer holds inputs × dimensions floats: bounded, whatever the two ask together.
  if (texts.length * size > SIMULATOR_LIMITS.embeddingValues)
    throw new BadRequest(
      `inputs × dimensions must be at most ${SIMULATOR_LIMITS.embeddingValues} (asked ${texts.length} × ${size})`,
    );
  if (encoding !== undefined && encoding !== 'float' && encoding !== 'base64')
    throw new BadRequest('encoding_format must be float or base64');
  return { model, texts, dimensions: size, base64: encoding === 'base64' };
}

function isTokenList(value: unknown): value is number[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((item) => Number.isSafeInteger(item) && (item as number) >= 0)
  );
}

/** The OpenAI embeddings response for already-cleaned texts. */
export function embeddingsResponse(
  input: EmbeddingsInput,
  cleaned: string[],
  directives: Directives,
) {
  const tokens =
    cleaned.reduce((sum, text) => sum + countTokens(text), 0) + (directives.extraTokens ?? 0);
  return {
    object: 'list',
    data: cleaned.map((text, index) => {
      const vector = embed(text, input.dimensions);
      return {
        object: 'embedding',
        index,
        embedding: input.base64
          ? Buffer.from(new Float32Array(vector).buffer).toString('base64')
          : vector,
      };
    }),
    model: input.model,
    ...(directives.noUsage === true
      ? {}
      : { usage: { prompt_tokens: tokens, total_tokens: tokens } }),
  };
}
