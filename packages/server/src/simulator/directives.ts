import { SIMULATOR_LIMITS } from './limits.js';

/**
 * Fault directives the simulator reads anywhere in the prompt (or the embedding input, or the
 * rerank query and documents): `[sim:fail=503]`, `[sim:delay=200]`, `[sim:cut_after=3]`,
 * `[sim:no_usage]`, `[sim:hang]`, `[sim:extra_tokens=50]`, `[sim:extra_prompt_tokens=50]`,
 * `[sim:cached_tokens=N]`, `[sim:cache_write_tokens=N]`, `[sim:service_tier=flex]`,
 * `[sim:task=fail]`, `[sim:task=fail_billed]`, `[sim:task=unknown]`, `[sim:task_seconds=8]`,
 * `[sim:deliver_seconds=4]`, `[sim:deliver_images=1]`, `[sim:context_overflow]`. Real adapters
 * never read them.
 */
export interface Directives {
  fail?: number;
  /** Text routes: refused as too long for the model's context window, in the provider's words. */
  contextOverflow?: boolean;
  delayMs?: number;
  cutAfter?: number;
  stallAfter?: number;
  errorAfter?: number;
  noUsage?: boolean;
  hang?: boolean;
  extraTokens?: number;
  /** Chat: prompt tokens reported beyond those read (input above the hold, within the credible bound). */
  extraPromptTokens?: number;
  /** Chat: prompt tokens reported as read from the provider's prompt cache (at most the input). */
  cachedTokens?: number;
  /** Chat: prompt tokens reported as written to the provider's prompt cache (Qwen's explicit cache). */
  cacheWriteTokens?: number;
  /** Chat: the `service_tier` the answer reports it was served on (OpenAI's `flex`, `priority`). */
  serviceTier?: string;
  /** Images and videos: the generation fails (billed or not), or the answer never comes. */
  task?: 'fail' | 'fail_billed' | 'unknown';
  /** Videos: seconds from creation to a finished job. */
  taskSeconds?: number;
  /** Videos: seconds of the delivered file, instead of those asked. */
  deliverSeconds?: number;
  /** Images: pictures delivered, instead of the `n` asked (at most `n`). */
  deliverImages?: number;
}

export class DirectiveError extends Error {
  override readonly name = 'DirectiveError';
}

const DIRECTIVE = /\[sim:([a-z_]+)(?:=([^\]\s]*))?\]/g;

function integer(name: string, value: string | undefined, min: number, max: number): number {
  const parsed = Number(value);
  if (value === undefined || !Number.isInteger(parsed) || parsed < min || parsed > max) {
    throw new DirectiveError(`directive [sim:${name}] needs an integer from ${min} to ${max}`);
  }
  return parsed;
}

function apply(directives: Directives, name: string, value: string | undefined): void {
  switch (name) {
    case 'fail':
      directives.fail = integer(name, value, 400, 599);
      return;
    case 'delay':
      directives.delayMs = integer(name, value, 0, 600_000);
      return;
    case 'cut_after':
      directives.cutAfter = integer(name, value, 0, 1_000_000);
      return;
    case 'stall_after':
      directives.stallAfter = integer(name, value, 0, 1_000_000);
      return;
    case 'error_after':
      directives.errorAfter = integer(name, value, 0, 1_000_000);
      return;
    case 'no_usage':
      directives.noUsage = true;
      return;
    case 'hang':
      directives.hang = true;
      return;
    case 'context_overflow':
      directives.contextOverflow = true;
      return;
    case 'extra_tokens':
      directives.extraTokens = integer(name, value, 0, 1_000_000_000);
      return;
    case 'extra_prompt_tokens':
      directives.extraPromptTokens = integer(name, value, 0, 1_000_000_000);
      return;
    case 'cached_tokens':
      directives.cachedTokens = integer(name, value, 0, 1_000_000_000);
      return;
    case 'service_tier':
      if (value === undefined || !/^[a-z0-9][a-z0-9_-]{0,31}$/.test(value))
        throw new DirectiveError(`directive [sim:${name}] needs a tier name such as flex`);
      directives.serviceTier = value;
      break;
    case 'cache_write_tokens':
      directives.cacheWriteTokens = integer(name, value, 0, 1_000_000_000);
      return;
    case 'task':
      if (value !== 'fail' && value !== 'fail_billed' && value !== 'unknown')
        throw new DirectiveError('directive [sim:task] takes fail, fail_billed or unknown');
      directives.task = value;
      return;
    case 'task_seconds':
      directives.taskSeconds = integer(name, value, 0, 3_600);
      return;
    case 'deliver_seconds':
      directives.deliverSeconds = integer(
        name,
        value,
        SIMULATOR_LIMITS.videoSeconds.min,
        SIMULATOR_LIMITS.videoSeconds.max,
      );
      return;
    case 'deliver_images':
      directives.deliverImages = integer(name, value, 0, SIMULATOR_LIMITS.imagesPerRequest);
      return;
    default:
      throw new DirectiveError(`unknown simulator directive [sim:${name}]`);
  }
}

/** Merges the directives of every text and returns the texts without them. Throws `DirectiveError`. */
export function parseDirectives(texts: readonly string[]): {
  directives: Directives;
  cleaned: string[];
} {
  const directives: Directives = {};
  const cleaned = texts.map((text) =>
    text
      .replace(DIRECTIVE, (_match, name: string, value: string | undefined) => {
        apply(directives, name, value);
        return '';
      })
      .trim(),
  );
  return { directives, cleaned };
}
