import type { FastifyRequest } from 'fastify';
import { invalidInput } from '../../../errors/api-error.js';

/** A beta name as Anthropic spells them (`interleaved-thinking-2025-05-14`). */
const BETA_NAME = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * The `anthropic-beta` values of a request, each named as dropped (`anthropic-beta: <value>`).
 * The rule is per channel (docs/anthropic-messages.md, "anthropic-beta"): betas are never
 * forwarded to an upstream that is not Anthropic's, and every channel today is an
 * OpenAI-compatible chat upstream, so every beta is dropped and named. `anthropic-version` is
 * accepted whatever its date: the answer is this gateway's Messages shape either way.
 */
export function droppedBetas(request: FastifyRequest): string[] {
  const header = request.headers['anthropic-beta'];
  if (header === undefined) return [];
  const values = (Array.isArray(header) ? header : [header])
    .flatMap((value) => value.split(','))
    .map((value) => value.trim())
    .filter((value) => value !== '');
  const odd = values.find((value) => !BETA_NAME.test(value));
  if (odd !== undefined)
    throw invalidInput('anthropic-beta', 'must be a comma-separated list of beta names');
  return [...new Set(values)].map((value) => `anthropic-beta: ${value}`);
}
