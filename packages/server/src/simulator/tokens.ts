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

/** Same count as `tokenize(text).length`, without holding every token (prompts can be MiBs). */
export function countTokens(text: string): number {
  const pattern = new RegExp(TOKEN.source, 'gu');
  let count = 0;
  while (pattern.exec(text) !== null) count += 1;
  return count;
}

/** Lower-cased word tokens (punctuation dropped), for embeddings and BM25. */
export function words(text: string): string[] {
  return tokenize(text.toLowerCase()).filter((token) => /[\p{L}\p{N}]/u.test(token));
}
