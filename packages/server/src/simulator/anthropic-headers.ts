import type { IncomingHttpHeaders } from 'node:http';
import { WireError } from './wire-error.js';

/**
 * The `anthropic-beta` values the simulator accepts, as Anthropic's API does: the names in
 * `@anthropic-ai/sdk`'s `AnthropicBeta` type (SDK 1.17.0) and those Claude Code sends
 * (`claude-code-20250219`, `oauth-2025-04-20`, `fine-grained-tool-streaming-2025-05-14`,
 * `prompt-caching-scope-2026-01-05`, `mid-conversation-system-2026-04-07`, `effort-2025-11-24`,
 * …, as captured from its requests). Any other value is refused, so a gateway test sees a beta
 * that a real upstream would refuse. Accepted betas change nothing in the answer.
 */
export const KNOWN_BETAS: ReadonlySet<string> = new Set([
  // Claude Code.
  'claude-code-20250219',
  // Claude Code 2.1.332, as recorded through the gateway (bench/agents).
  'per-turn-control-2026-07-01',
  'advanced-tool-use-2025-11-20',
  'tool-search-tool-2025-10-19',
  'oauth-2025-04-20',
  'interleaved-thinking-2025-05-14',
  'fine-grained-tool-streaming-2025-05-14',
  'context-management-2025-06-27',
  'prompt-caching-scope-2026-01-05',
  'mid-conversation-system-2026-04-07',
  'effort-2025-11-24',
  'thinking-token-count-2026-05-13',
  'advisor-tool-2026-03-01',
  'extended-cache-ttl-2025-04-11',
  'context-1m-2025-08-07',
  'structured-outputs-2025-12-15',
  'web-search-2025-03-05',
  // @anthropic-ai/sdk AnthropicBeta.
  'message-batches-2024-09-24',
  'prompt-caching-2024-07-31',
  'computer-use-2024-10-22',
  'computer-use-2025-01-24',
  'computer-use-2025-11-24',
  'pdfs-2024-09-25',
  'token-counting-2024-11-01',
  'token-efficient-tools-2025-02-19',
  'output-128k-2025-02-19',
  'output-300k-2026-03-24',
  'files-api-2025-04-14',
  'mcp-client-2025-04-04',
  'mcp-client-2025-11-20',
  'mcp-client-2026-09-15',
  'dev-full-thinking-2025-05-14',
  'code-execution-2025-05-22',
  'model-context-window-exceeded-2025-08-26',
  'skills-2025-10-02',
  'structured-outputs-2025-11-13',
  'fast-mode-2026-02-01',
  'compact-2026-01-12',
  'compact-2026-09-04',
  'task-budgets-2026-03-13',
  'cache-diagnosis-2026-04-07',
  'thinking-display-updates-2026-08-18',
  'thinking-binding-controls-2026-08-01',
  'mid-conversation-tool-changes-2026-07-01',
  'mid-conversation-output-config-2026-07-01',
  'mid-conversation-system-clear-at-2026-08-21',
  'inline-tools-2026-09-15',
  'server-side-fallback-2026-06-01',
  'server-side-fallback-2026-07-01',
  'fallback-credit-2026-06-01',
  'fallback-credit-2026-07-01',
]);

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
};

/**
 * The headers `/v1/messages*` requires, checked as Anthropic checks them: `anthropic-version`
 * present (any value), and every `anthropic-beta` value (comma-separated, possibly in several
 * header lines) known. Throws `WireError` (400).
 */
export function checkAnthropicHeaders(headers: IncomingHttpHeaders): void {
  const version = header(headers, 'anthropic-version');
  if (version === undefined || version.trim() === '')
    throw new WireError('anthropic-version: header is required');
  const betas = header(headers, 'anthropic-beta');
  if (betas === undefined) return;
  const unknown = betas
    .split(',')
    .map((beta) => beta.trim())
    .filter((beta) => beta !== '' && !KNOWN_BETAS.has(beta));
  if (unknown.length > 0)
    throw new WireError(
      `Unexpected value(s) ${unknown.map((beta) => `\`${beta}\``).join(', ')} for the \`anthropic-beta\` header. Please consult our documentation at docs.anthropic.com or try again without the header.`,
    );
}

/**
 * The OpenAI-style routes refuse any `anthropic-beta` header: a real OpenAI-compatible upstream
 * ignores it, but a gateway that forwards one there has leaked an Anthropic-only header, and a
 * test should see it.
 */
export function refuseAnthropicBeta(headers: IncomingHttpHeaders): void {
  if (headers['anthropic-beta'] === undefined) return;
  throw new WireError(
    'The `anthropic-beta` header is not accepted by an OpenAI-style upstream (simulator check: an Anthropic beta must never reach a non-Anthropic upstream).',
    { param: 'anthropic-beta', code: 'anthropic_beta_not_allowed' },
  );
}
