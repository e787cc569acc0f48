import type { FastifyRequest } from 'fastify';
import { invalidInput } from '../../../errors/api-error.js';

/** A beta name as Anthropic spells them (`interleaved-thinking-2025-05-14`). */
const BETA_NAME = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * The `anthropic-beta` header of a request, checked: its beta names, and the header as sent.
 * The rule is per channel (docs/anthropic-messages.md, "anthropic-beta"): the header goes
 * verbatim to an Anthropic channel (`chat_api: messages`) and never to any other; when the model
 * has no Anthropic channel each beta is named as dropped (`anthropic-beta: <value>`).
 * `anthropic-version` is accepted whatever its date: the answer is this gateway's Messages shape
 * either way (an Anthropic upstream is sent the version its adapter speaks).
 */
export function requestedBetas(request: FastifyRequest): { names: string[]; header?: string } {
  const header = request.headers['anthropic-beta'];
  if (header === undefined) return { names: [] };
  const sent = Array.isArray(header) ? header.join(',') : header;
  const values = sent
    .split(',')
    .map((value) => value.trim())
    .filter((value) => value !== '');
  const odd = values.find((value) => !BETA_NAME.test(value));
  if (odd !== undefined)
    throw invalidInput('anthropic-beta', 'must be a comma-separated list of beta names');
  return { names: [...new Set(values)], header: sent };
}

/** The betas as `X-Tollgate-Dropped-Fields` names them. */
export const droppedBetaNames = (names: readonly string[]) =>
  names.map((value) => `anthropic-beta: ${value}`);
