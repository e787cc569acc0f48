/**
 * The worst-case token count held before an upstream call, without a tokenizer: a text's UTF-8
 * byte length bounds its token count for byte-level BPE and word-piece tokenizers, and
 * `SPECIAL_TOKENS_PER_TEXT` covers the begin/end/separator tokens some models add. When an
 * upstream reports more anyway, the difference is charged only if available (else the record
 * awaits funds); see docs/billing.md.
 */
export const SPECIAL_TOKENS_PER_TEXT = 8;

export function worstCaseTokens(texts: readonly string[]): { tokens: number; bytes: number } {
  let bytes = 0;
  for (const text of texts) bytes += Buffer.byteLength(text, 'utf8');
  return { tokens: bytes + SPECIAL_TOKENS_PER_TEXT * texts.length, bytes };
}

/**
 * Token-array inputs (OpenAI's embeddings form: token ids the caller already counted): the count
 * is exact, so the hold is the ids given plus the special tokens per input; each id counts as a
 * byte toward the model's `max_input_bytes`.
 */
export function worstCaseTokenLists(lists: readonly (readonly number[])[]): {
  tokens: number;
  bytes: number;
} {
  let count = 0;
  for (const list of lists) count += list.length;
  return { tokens: count + SPECIAL_TOKENS_PER_TEXT * lists.length, bytes: count };
}
