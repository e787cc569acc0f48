import type { LruMemory } from './lru-memory.js';
import type { CacheBreakpoint } from './messages-blocks.js';
import { countTokens } from './tokens.js';
import { IMAGE_TOKENS } from './turn.js';

/** Input tokens of one Messages request by what the prompt cache did with them. */
export interface CacheUsage {
  /** Tokens of the longest marked prefix this organisation had cached (unexpired). */
  read: number;
  /** Tokens written to the cache, by the TTL of the breakpoint that ends their segment. */
  created5m: number;
  created1h: number;
}

const TTL_MS = { '5m': 5 * 60_000, '1h': 60 * 60_000 } as const;

/**
 * Anthropic's prompt caching, deterministic: each `cache_control` breakpoint ends a prefix. The
 * longest prefix this organisation (the caller's key) already cached for the model is read;
 * everything from there to the last breakpoint is written, each segment under its breakpoint's
 * TTL. Every prefix is then remembered (a read refreshes it) for its TTL, in `memory` — bounded,
 * least recently used forgotten first. The rest of the prompt is ordinary input.
 */
export function applyPromptCache(
  breakpoints: readonly CacheBreakpoint[],
  cleaned: readonly string[],
  memory: LruMemory,
  organisation: string,
): CacheUsage {
  const usage: CacheUsage = { read: 0, created5m: 0, created1h: 0 };
  if (breakpoints.length === 0) return usage;
  const prefixTokens: number[] = [];
  let counted = 0;
  let tokens = 0;
  for (const mark of breakpoints) {
    for (; counted < mark.texts; counted += 1) tokens += countTokens(cleaned[counted] ?? '');
    prefixTokens.push(tokens + IMAGE_TOKENS * mark.images);
  }
  const key = (mark: CacheBreakpoint) => `${organisation}:${mark.digest}`;
  let hit = -1;
  for (let index = breakpoints.length - 1; index >= 0 && hit < 0; index -= 1) {
    const mark = breakpoints[index];
    if (mark !== undefined && memory.has(key(mark))) hit = index;
  }
  usage.read = hit < 0 ? 0 : (prefixTokens[hit] ?? 0);
  for (const [index, mark] of breakpoints.entries()) {
    memory.remember(key(mark), TTL_MS[mark.ttl]);
    if (index <= hit) continue;
    const segment = (prefixTokens[index] ?? 0) - (prefixTokens[index - 1] ?? 0);
    if (mark.ttl === '1h') usage.created1h += segment;
    else usage.created5m += segment;
  }
  return usage;
}
