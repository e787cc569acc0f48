/**
 * The simulator's tokenizer: words (runs of letters and digits) and single other non-space
 * characters. Contract: a text's token count is never above its UTF-8 byte length, because
 * every token covers at least one character of at least one byte. The gateway's worst-case
 * hold relies on that bound.
 */
const TOKEN = /[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu;

export function tokenize(text: string): string[] {
  return text.match(TOKEN) ?? [];
}

export function countTokens(text: string): number {
  return tokenize(text).length;
}

/** Lower-cased word tokens (punctuation dropped), for embeddings and BM25. */
export function words(text: string): string[] {
  return tokenize(text.toLowerCase()).filter((token) => /[\p{L}\p{N}]/u.test(token));
}
